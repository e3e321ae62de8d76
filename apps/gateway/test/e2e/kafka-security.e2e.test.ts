// Own fleet (not the shared one of ./shared/): the fleet runs on a second, SASL_SSL-only broker.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import {
  adminCommand,
  eventually,
  SERVICE_NAMES,
  startFixtureSite,
  startFleet,
  startSecureKafka,
  type FixtureSite,
  type Fleet,
  type SecureKafka,
} from '@wdr/testkit';

/**
 * The whole fleet on a secured Kafka cluster, configured only through the documented env
 * (docs/operations.md, "Kafka"): TLS verified against the cluster's CA, SASL SCRAM-SHA-512. The
 * secured broker (testkit startSecureKafka) has no plaintext client listener, so every produce and
 * every consumer of every service goes through TLS and SASL, or nothing completes.
 */
let secure: SecureKafka;
let fleet: Fleet;
let site: FixtureSite;
let apiKey: string;

beforeAll(async () => {
  secure = await startSecureKafka();
  site = await startFixtureSite();
  fleet = await startFleet({
    env: {
      all: {
        KAFKA_BROKERS: secure.saslSslBroker,
        KAFKA_SSL_CA_FILE: secure.files.ca,
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_SASL_USERNAME: secure.users.scram512.username,
        KAFKA_SASL_PASSWORD: secure.users.scram512.password,
      },
    },
  });
  apiKey = (await adminCommand(fleet, ['create-tenant', '--name', 'kafka-sasl-ssl', '--credits', '100']))['api_key'] as string;
}, 240_000);

afterAll(async () => {
  await fleet?.stop();
  await site?.close();
  await secure?.stop();
}, 60_000);

const gateway = () => request(fleet.url('gateway'));

describe('the fleet on a SASL_SSL cluster', () => {
  it('every service reports its Kafka checks ready over TLS + SCRAM-SHA-512', async () => {
    for (const service of SERVICE_NAMES) {
      const res = await request(fleet.url(service)).get('/readyz');
      expect({ service, status: res.status }).toEqual({ service, status: 200 });
      const checks = (res.body as { checks: { name: string; ok: boolean }[] }).checks;
      // Every check passes, the Kafka ones (reported, not required) included: fleet.start waited for them.
      expect({ service, failing: checks.filter((c) => !c.ok).map((c) => c.name) }).toEqual({ service, failing: [] });
      expect({ service, kafkaChecks: checks.some((c) => /kafka|consumer|relay|outbox/i.test(c.name)) }).toEqual({
        service,
        kafkaChecks: true,
      });
    }
  });

  it.each([
    ['http', { mode: 'http' }],
    ['browser (the default mode)', {}],
  ])(
    'a %s request is admitted, fetched and settled (outbox, fetch or render jobs, billing commands and events all over the secured broker)',
    async (_label, extra) => {
      const created = await gateway()
        .post('/api/v1/data/requests')
        .set('X-API-Key', apiKey)
        .send({ url: `${site.url}/page`, ...extra });
      expect(created.status).toBe(202);
      const id = (created.body as { id: string }).id;
      const detail = await eventually(
        async () => (await gateway().get(`/api/v1/data/requests/${id}`).set('X-API-Key', apiKey)).body as Record<string, unknown>,
        (d) => d['status'] === 'completed' && d['token_state'] === 'settled',
        90_000,
      );
      expect(detail).toMatchObject({ status: 'completed', token_state: 'settled' });
      const result = await gateway().get(`/api/v1/data/requests/${id}/result?format=text`).set('X-API-Key', apiKey);
      expect(result.status).toBe(200);
      expect(result.text.length).toBeGreaterThan(0);
    },
  );
});

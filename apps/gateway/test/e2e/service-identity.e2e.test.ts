// Own fleet (not the shared one of ./shared/): it restarts billing-ledger with other key sets (a key rotation).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { FLEET_SERVICES, INTERNAL_APIS, type AnyInternalEndpoint, type InternalCallee, type ServiceName } from '@wdr/contracts';
import { adminCommand, internalAgent, newTestKey, publicJwkOf, serviceToken, startFleet, testKeyOf, type Fleet } from '@wdr/testkit';

/**
 * Services know who calls them (issue 20, item 3), against the real fleet: generated from the
 * contracts' table of internal routes (`INTERNAL_APIS`), every route of every callee answers 401
 * without a valid service identity (none, a forged signature, another audience, an expired token,
 * an unknown key) and 403 to each service the route does not name; a service it names gets past
 * the gate (whatever the route then answers to an empty call). Then the attacks of the issue, each
 * by name. The fleet's own calls are the other e2e files (walking skeleton, browser, batches...).
 */
let fleet: Fleet;

beforeAll(async () => {
  fleet = await startFleet();
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
}, 60_000);

/** A value each path parameter's schema takes (the first candidate it accepts). */
const CANDIDATES = [randomUUID(), 'screenshot.png', 'generation:op-1', `msg_${'a'.repeat(32)}`];
function samplePath(ep: AnyInternalEndpoint): string {
  const params = ep.params as Record<string, { safeParse(v: unknown): { success: boolean } }>;
  const values = Object.fromEntries(
    Object.entries(params).map(([name, schema]) => {
      const v = CANDIDATES.find((c) => schema.safeParse(c).success);
      if (v === undefined) throw new Error(`${ep.route}: no sample value for :${name}`);
      return [name, v];
    }),
  );
  return ep.path(values as never);
}

const ROUTES: [string, InternalCallee, AnyInternalEndpoint][] = (Object.keys(INTERNAL_APIS) as InternalCallee[]).flatMap((callee) =>
  Object.entries(INTERNAL_APIS[callee] as Record<string, AnyInternalEndpoint>).map(
    ([name, ep]) => [`${callee} ${name} (${ep.method} ${ep.route})`, callee, ep] as [string, InternalCallee, AnyInternalEndpoint],
  ),
);

function call(callee: InternalCallee, ep: AnyInternalEndpoint, authorization?: string) {
  const agent = request(fleet.url(callee));
  const path = samplePath(ep);
  const req = ep.method === 'GET' ? agent.get(path) : agent.post(path).send({});
  return authorization === undefined ? req : req.set('Authorization', authorization);
}

describe('the table of internal routes', () => {
  it('names only services of the fleet as callers, and the gateway serves no internal route', () => {
    expect(ROUTES.length).toBeGreaterThan(40);
    for (const [, , ep] of ROUTES) for (const c of ep.callers) expect(FLEET_SERVICES).toContain(c);
    expect(Object.keys(INTERNAL_APIS)).not.toContain('gateway');
  });
});

describe.each(ROUTES)('%s', (_, callee, ep) => {
  it('answers 401 without an identity, with a forged signature, for another audience, expired, or under an unknown key', async () => {
    const named: ServiceName = ep.callers[0] ?? 'gateway';
    const forged = { ...newTestKey('forged'), kid: testKeyOf(named).kid };
    const other = callee === 'billing-ledger' ? 'fetch-orchestrator' : 'billing-ledger';
    const tokens = {
      none: undefined,
      garbage: 'Bearer not-a-token',
      forged_signature: `Bearer ${serviceToken(named, callee, { key: forged })}`,
      wrong_audience: `Bearer ${serviceToken(named, other)}`,
      expired: `Bearer ${serviceToken(named, callee, { issuedSecondsAgo: 600 })}`,
      unknown_key: `Bearer ${serviceToken(named, callee, { key: newTestKey(`${named}.unlisted`) })}`,
    };
    for (const [kind, authorization] of Object.entries(tokens)) {
      const res = await call(callee, ep, authorization);
      expect({ kind, status: res.status, code: res.body?.code }).toEqual({ kind, status: 401, code: 'UNAUTHENTICATED' });
    }
  });

  it('answers 403 to every service it does not name, and lets each named one past the gate', async () => {
    for (const service of FLEET_SERVICES) {
      const res = await call(callee, ep, `Bearer ${serviceToken(service, callee)}`);
      if (ep.callers.includes(service))
        expect({ service, past_the_gate: res.status !== 401 && res.status !== 403 }).toEqual({ service, past_the_gate: true });
      else expect({ service, status: res.status, code: res.body?.code }).toEqual({ service, status: 403, code: 'FORBIDDEN' });
    }
  });
});

describe('the attacks of the issue', () => {
  let tenant: string;
  const balance = async () =>
    (
      await internalAgent(request(fleet.url('billing-ledger')), 'billing-ledger')
        .get(`/internal/v1/accounts/${tenant}/balance`)
        .expect(200)
    ).body.balance_tokens as number;

  beforeAll(async () => {
    tenant = (await adminCommand(fleet, ['create-tenant', '--name', `identity-${randomUUID()}`, '--credits', '10']))['tenant_id'] as string;
  }, 60_000);

  it('an anonymous top-up, grant or correction mints nothing', async () => {
    for (const kind of ['top-ups', 'grants', 'corrections']) {
      const res = await request(fleet.url('billing-ledger'))
        .post(`/internal/v1/accounts/${tenant}/${kind}`)
        .send({ amount: 1_000_000, reference: `attack-${kind}`, memo: 'x' });
      expect(res.status).toBe(401);
    }
    expect(await balance()).toBe(10);
  });

  it('the renderer cannot mint credits, and no service can top up or correct over HTTP (no such route)', async () => {
    for (const [caller, kind, status] of [
      ['browser-renderer', 'grants', 403],
      ['browser-renderer', 'top-ups', 404],
      ['gateway', 'top-ups', 404],
      ['fetch-orchestrator', 'corrections', 404],
    ] as const) {
      const res = await request(fleet.url('billing-ledger'))
        .post(`/internal/v1/accounts/${tenant}/${kind}`)
        .set('Authorization', `Bearer ${serviceToken(caller, 'billing-ledger')}`)
        .send({ amount: 1_000_000, reference: `attack-${caller}-${kind}`, memo: 'x' });
      expect({ caller, kind, status: res.status }).toEqual({ caller, kind, status });
    }
    expect(await balance()).toBe(10);
  });

  it("the renderer cannot read another route's data: a request, its result, a balance, a webhook endpoint or a recipe", async () => {
    const as = `Bearer ${serviceToken('browser-renderer', 'fetch-orchestrator')}`;
    const id = randomUUID();
    for (const path of [`/internal/v1/requests/${id}?tenant_id=${tenant}`, `/internal/v1/requests/${id}/result?tenant_id=${tenant}`])
      expect((await request(fleet.url('fetch-orchestrator')).get(path).set('Authorization', as)).status).toBe(403);
    for (const [callee, path] of [
      ['billing-ledger', `/internal/v1/accounts/${tenant}/balance`],
      ['webhook-dispatcher', `/internal/v1/webhook-endpoints?tenant_id=${tenant}`],
      ['recipe-extractor', `/internal/v1/recipes?tenant_id=${tenant}`],
    ] as const) {
      const res = await request(fleet.url(callee))
        .get(path)
        .set('Authorization', `Bearer ${serviceToken('browser-renderer', callee)}`);
      expect({ callee, status: res.status }).toEqual({ callee, status: 403 });
    }
  });

  it('the gateway cannot start a render job, post render results or CAPTCHA steps', async () => {
    const id = randomUUID();
    for (const step of ['start', 'result', 'captcha', 'captcha/solved']) {
      const res = await request(fleet.url('fetch-orchestrator'))
        .post(`/internal/v1/render-jobs/${id}/${step}`)
        .set('Authorization', `Bearer ${serviceToken('gateway', 'fetch-orchestrator')}`)
        .send({ outcome: 'completed' });
      expect({ step, status: res.status }).toEqual({ step, status: 403 });
    }
  });

  it("a token the renderer signs as the gateway (its own key, another service's name) is refused", async () => {
    const res = await request(fleet.url('billing-ledger'))
      .get(`/internal/v1/accounts/${tenant}/balance`)
      .set('Authorization', `Bearer ${serviceToken('browser-renderer', 'billing-ledger', { iss: 'gateway' })}`);
    expect(res.status).toBe(401);
  });

  it('a route the contracts do not list is not reached, whoever calls', async () => {
    const res = await request(fleet.url('billing-ledger'))
      .get('/internal/v1/debug')
      .set('Authorization', `Bearer ${serviceToken('gateway', 'billing-ledger')}`);
    expect(res.status).toBe(404);
    expect((await request(fleet.url('billing-ledger')).get('/internal/v1/debug')).status).toBe(401);
  });
});

describe('/metrics has a port of its own', () => {
  it.each(FLEET_SERVICES)('%s serves /metrics on METRICS_PORT only, and nothing else there', async (service) => {
    const scraped = await request(fleet.metricsUrl(service)).get('/metrics').expect(200);
    expect(scraped.text).toMatch(/^# HELP /m);
    // The API port does not serve it (a callee's gate asks for an identity first; the gateway has no such route).
    expect([401, 404]).toContain((await request(fleet.url(service)).get('/metrics')).status);
    // The metrics port reaches no route of the API.
    expect((await request(fleet.metricsUrl(service)).get('/readyz')).status).toBe(404);
    expect((await request(fleet.metricsUrl(service)).post('/internal/v1/reservations').send({})).status).toBe(404);
  });
});

describe('rotating a service key on the real ledger', () => {
  it('takes tokens of the old and the new kid during the overlap, and refuses the old kid once its key is removed', async () => {
    const next = newTestKey('gateway.rotated');
    const balanceAs = async (key: ReturnType<typeof newTestKey>) =>
      (
        await request(fleet.url('billing-ledger'))
          .get(`/internal/v1/accounts/${randomUUID()}/balance`)
          .set('Authorization', `Bearer ${serviceToken('gateway', 'billing-ledger', { key })}`)
      ).status;
    const keySet = (keys: object[]) => JSON.stringify({ keys });
    const others = FLEET_SERVICES.filter((s) => s !== 'gateway').map((s) => publicJwkOf(s));
    const restartLedger = async (keys: object[]) => {
      await fleet.kill('billing-ledger');
      await fleet.start('billing-ledger', { SERVICE_IDENTITY_KEYS: keySet(keys) });
    };

    // Before: the new kid is unknown.
    expect(await balanceAs(next)).toBe(401);
    expect(await balanceAs(testKeyOf('gateway'))).toBe(200);
    // Overlap: both of the gateway's keys in the set.
    await restartLedger([...others, publicJwkOf('gateway'), publicJwkOf('gateway', next)]);
    expect(await balanceAs(testKeyOf('gateway'))).not.toBe(401);
    expect(await balanceAs(next)).not.toBe(401);
    // After: the old key removed, its tokens are refused; the new one goes on.
    await restartLedger([...others, publicJwkOf('gateway', next)]);
    expect(await balanceAs(testKeyOf('gateway'))).toBe(401);
    expect(await balanceAs(next)).not.toBe(401);
  }, 120_000);
});

import { describe, expect, it } from '@jest/globals';
import { loadEnv, kafkaEnv } from '../config.js';
import { kafkaSecurityFrom, topicPolicyFrom } from './kafka-config.js';

const files: Record<string, string> = { '/s/ca.crt': 'CA-PEM', '/s/user.crt': 'CERT-PEM', '/s/user.key': 'KEY-PEM' };
const read = (p: string) => {
  const v = files[p];
  if (v === undefined) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
  return v;
};
const parse = (vars: Record<string, string>) => loadEnv(kafkaEnv, vars);

describe('Kafka security from env', () => {
  it('is plaintext without any setting (the local stack)', () => {
    expect(kafkaSecurityFrom(parse({}), read)).toEqual({});
  });

  it('KAFKA_REQUIRE_TLS=true refuses a configuration without TLS (the wdr-kafka Secret missing), accepts one with it', () => {
    expect(() => kafkaSecurityFrom(parse({ KAFKA_REQUIRE_TLS: 'true' }), read)).toThrow(
      /KAFKA_REQUIRE_TLS is true but no TLS is configured/,
    );
    expect(() =>
      kafkaSecurityFrom(
        parse({ KAFKA_REQUIRE_TLS: 'true', KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' }),
        read,
      ),
    ).toThrow(/KAFKA_REQUIRE_TLS/);
    expect(kafkaSecurityFrom(parse({ KAFKA_REQUIRE_TLS: 'true', KAFKA_SSL: 'true' }), read)).toEqual({ ssl: { rejectUnauthorized: true } });
    expect(kafkaSecurityFrom(parse({ KAFKA_REQUIRE_TLS: 'true', KAFKA_SSL_CA: 'INLINE-CA' }), read).ssl).toEqual({
      rejectUnauthorized: true,
      ca: ['INLINE-CA'],
    });
  });

  it('KAFKA_SSL=true alone: TLS verified against the system CAs', () => {
    expect(kafkaSecurityFrom(parse({ KAFKA_SSL: 'true' }), read)).toEqual({ ssl: { rejectUnauthorized: true } });
  });

  it('a CA file turns TLS on and replaces the system CAs; client certificate and key from files', () => {
    const sec = kafkaSecurityFrom(
      parse({
        KAFKA_SSL_CA_FILE: '/s/ca.crt',
        KAFKA_SSL_CERT_FILE: '/s/user.crt',
        KAFKA_SSL_KEY_FILE: '/s/user.key',
        KAFKA_SSL_KEY_PASSWORD: 'pw',
      }),
      read,
    );
    expect(sec.ssl).toEqual({ rejectUnauthorized: true, ca: ['CA-PEM'], cert: 'CERT-PEM', key: 'KEY-PEM', passphrase: 'pw' });
    expect(sec.sasl).toBeUndefined();
  });

  it('PEM text inline works as well', () => {
    expect(kafkaSecurityFrom(parse({ KAFKA_SSL_CA: 'INLINE-CA' }), read).ssl).toEqual({ rejectUnauthorized: true, ca: ['INLINE-CA'] });
  });

  it.each(['scram-sha-512', 'scram-sha-256', 'plain'] as const)('SASL %s with username and password (over TLS)', (mechanism) => {
    const sec = kafkaSecurityFrom(
      parse({ KAFKA_SSL: '1', KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: 'wdr', KAFKA_SASL_PASSWORD: 's3cret' }),
      read,
    );
    expect(sec).toEqual({ ssl: { rejectUnauthorized: true }, sasl: { mechanism, username: 'wdr', password: 's3cret' } });
  });

  it('rejects an unknown SASL mechanism at parse time', () => {
    expect(() => parse({ KAFKA_SASL_MECHANISM: 'gssapi' })).toThrow(/KAFKA_SASL_MECHANISM/);
  });

  it.each([
    [{ KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'u' }, /needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD/],
    [{ KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' }, /without KAFKA_SASL_MECHANISM/],
    [{ KAFKA_SSL_CERT_FILE: '/s/user.crt' }, /give both/],
    [{ KAFKA_SSL_CA: 'x', KAFKA_SSL_CA_FILE: '/s/ca.crt' }, /set one, not both/],
    [{ KAFKA_SSL_CA_FILE: '/s/missing.crt' }, /cannot read \/s\/missing.crt \(ENOENT\)/],
    [{ KAFKA_SSL: 'false', KAFKA_SSL_CA: 'x' }, /KAFKA_SSL is false/],
  ])('refuses %j at boot', (vars, message) => {
    expect(() => kafkaSecurityFrom(parse(vars as Record<string, string>), read)).toThrow(message);
  });

  it('never puts the password in the error text', () => {
    expect(() => kafkaSecurityFrom(parse({ KAFKA_SASL_PASSWORD: 'hunter2' }), read)).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('hunter2') }),
    );
  });
});

describe('topic policy from env', () => {
  it('creates topics with replication factor 1 outside production, verifies them in production', () => {
    expect(topicPolicyFrom({ ...parse({}), NODE_ENV: 'development' })).toEqual({ mode: 'create', replicationFactor: 1 });
    expect(topicPolicyFrom({ ...parse({}), NODE_ENV: 'production' })).toEqual({ mode: 'verify', replicationFactor: 1 });
  });

  it('takes the mode, replication factor and min.insync.replicas from env', () => {
    const env = parse({ KAFKA_TOPICS_MODE: 'create', KAFKA_REPLICATION_FACTOR: '3', KAFKA_MIN_INSYNC_REPLICAS: '2' });
    expect(topicPolicyFrom({ ...env, NODE_ENV: 'production' })).toEqual({ mode: 'create', replicationFactor: 3, minInsyncReplicas: 2 });
  });

  it('refuses min.insync.replicas above the replication factor (every acks=all write would fail)', () => {
    expect(() => topicPolicyFrom(parse({ KAFKA_REPLICATION_FACTOR: '1', KAFKA_MIN_INSYNC_REPLICAS: '2' }))).toThrow(
      /above KAFKA_REPLICATION_FACTOR/,
    );
    expect(() => parse({ KAFKA_TOPICS_MODE: 'auto' })).toThrow(/KAFKA_TOPICS_MODE/);
  });
});

import { describe, expect, it, jest } from '@jest/globals';
import express from 'express';
import request from 'supertest';
import { z } from 'zod';
import { endpoint, ledgerApi, orchestratorApi } from '@wdr/contracts';
import { newTestKey, publicJwkOf, serviceToken, testKeySet, identityEnvOf } from '@wdr/testkit';
import { errorHandler } from './errors.js';
import { createLogger } from './log.js';
import { createMetrics } from './metrics.js';
import { createHttpShell } from './service.js';
import {
  CallerVerifier,
  callerGate,
  generateServiceKey,
  parseKeySet,
  routePattern,
  serviceIdentityFrom,
  ServiceSigner,
  type RefusalReason,
} from './service-identity.js';

const reasonOf = async (verifier: CallerVerifier, authorization: string | undefined): Promise<RefusalReason | 'accepted'> =>
  verifier.verify(authorization).then(
    () => 'accepted' as const,
    (err: { reason: RefusalReason }) => err.reason,
  );

describe('tokens', () => {
  const ledger = new CallerVerifier('billing-ledger', parseKeySet(testKeySet()));

  it('a service signs a 60 s token its callee verifies, naming the caller and its key', async () => {
    const signer = serviceIdentityFrom('fetch-orchestrator', identityEnvOf('fetch-orchestrator')).signer;
    const token = await signer.tokenFor('billing-ledger');
    const [header, payload] = token
      .split('.')
      .slice(0, 2)
      .map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>);
    expect(header).toMatchObject({ alg: 'EdDSA', kid: signer.kid, typ: 'JWT' });
    expect(payload).toMatchObject({ iss: 'fetch-orchestrator', aud: 'billing-ledger' });
    expect((payload!['exp'] as number) - (payload!['iat'] as number)).toBe(60);
    await expect(ledger.verify(`Bearer ${token}`)).resolves.toEqual({ service: 'fetch-orchestrator', kid: signer.kid });
    // Reused while more than half its life is left.
    expect(await signer.tokenFor('billing-ledger')).toBe(token);
  });

  it('refuses a missing, malformed, expired, long-lived, misaddressed, forged or unknown-key token', async () => {
    expect(await reasonOf(ledger, undefined)).toBe('missing');
    expect(await reasonOf(ledger, 'Basic abc')).toBe('malformed');
    expect(await reasonOf(ledger, 'Bearer not.a.jwt')).toBe('malformed');
    expect(await reasonOf(ledger, `Bearer ${serviceToken('gateway', 'billing-ledger', { issuedSecondsAgo: 120 })}`)).toBe('expired');
    // A token whose own exp is far away is still refused once it is older than 60 s.
    expect(await reasonOf(ledger, `Bearer ${serviceToken('gateway', 'billing-ledger', { issuedSecondsAgo: 100, ttlSeconds: 3600 })}`)).toBe(
      'expired',
    );
    expect(await reasonOf(ledger, `Bearer ${serviceToken('gateway', 'billing-ledger', { ttlSeconds: 3600 })}`)).toBe('bad_claims');
    expect(await reasonOf(ledger, `Bearer ${serviceToken('gateway', 'fetch-orchestrator')}`)).toBe('wrong_audience');
    // The renderer's key cannot speak for the gateway.
    expect(await reasonOf(ledger, `Bearer ${serviceToken('browser-renderer', 'billing-ledger', { iss: 'gateway' })}`)).toBe('bad_claims');
    // Signed by a key the set does not hold, or by another key under a known kid.
    expect(await reasonOf(ledger, `Bearer ${serviceToken('gateway', 'billing-ledger', { key: newTestKey('stranger') })}`)).toBe(
      'unknown_key',
    );
    const impostor = { ...newTestKey('x'), kid: publicJwkOf('gateway').kid };
    expect(await reasonOf(ledger, `Bearer ${serviceToken('gateway', 'billing-ledger', { key: impostor })}`)).toBe('bad_signature');
    // alg none or another algorithm is never taken.
    const good = serviceToken('gateway', 'billing-ledger');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', kid: publicJwkOf('gateway').kid })).toString('base64url')}.${good.split('.')[1]}.x`;
    expect(await reasonOf(ledger, `Bearer ${none}`)).not.toBe('accepted');
    expect(await reasonOf(ledger, `Bearer ${good}`)).toBe('accepted');
  });
});

describe('key rotation', () => {
  it('answers a token it accepted from memory only while the token is within its exp and maximum age', async () => {
    const verifier = new CallerVerifier('billing-ledger', parseKeySet(testKeySet()));
    // Valid for 10 more seconds (plus the 5 s tolerance).
    const token = `Bearer ${serviceToken('gateway', 'billing-ledger', { issuedSecondsAgo: 50 })}`;
    expect(await reasonOf(verifier, token)).toBe('accepted');
    await expect(verifier.verify(token)).resolves.toEqual({ service: 'gateway', kid: publicJwkOf('gateway').kid });
    jest.useFakeTimers({ now: Date.now() + 20_000, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      expect(await reasonOf(verifier, token)).toBe('expired');
    } finally {
      jest.useRealTimers();
    }
    // A forged token sharing nothing but the shape is never taken from memory.
    const [h, p] = token.slice('Bearer '.length).split('.');
    expect(await reasonOf(verifier, `Bearer ${h}.${p}.${'A'.repeat(86)}`)).toBe('bad_signature');
  });

  it('during the overlap tokens of the old and the new kid both verify; once the old key is removed its tokens are refused', async () => {
    const old = generateServiceKey('browser-renderer', 'browser-renderer.old');
    const next = generateServiceKey('browser-renderer', 'browser-renderer.new');
    const others = parseKeySet(testKeySet()).filter((k) => k.service !== 'browser-renderer');
    const oldSigner = new ServiceSigner('browser-renderer', old.privateJwk);
    const newSigner = new ServiceSigner('browser-renderer', next.privateJwk);
    const oldToken = `Bearer ${await oldSigner.tokenFor('fetch-orchestrator')}`;
    const newToken = `Bearer ${await newSigner.tokenFor('fetch-orchestrator')}`;

    const before = new CallerVerifier('fetch-orchestrator', [...others, old.publicJwk]);
    expect(await reasonOf(before, oldToken)).toBe('accepted');
    expect(await reasonOf(before, newToken)).toBe('unknown_key');

    const overlap = new CallerVerifier('fetch-orchestrator', [...others, old.publicJwk, next.publicJwk]);
    await expect(overlap.verify(oldToken)).resolves.toEqual({ service: 'browser-renderer', kid: 'browser-renderer.old' });
    await expect(overlap.verify(newToken)).resolves.toEqual({ service: 'browser-renderer', kid: 'browser-renderer.new' });

    const after = new CallerVerifier('fetch-orchestrator', [...others, next.publicJwk]);
    expect(await reasonOf(after, newToken)).toBe('accepted');
    expect(await reasonOf(after, oldToken)).toBe('unknown_key');
  });

  it('refuses bad settings at boot, naming the setting and the problem', () => {
    const env = identityEnvOf('gateway');
    expect(() => serviceIdentityFrom('gateway', {})).toThrow(/SERVICE_IDENTITY_KEY .*is required/);
    expect(() => serviceIdentityFrom('gateway', { ...env, SERVICE_IDENTITY_KEY: '{"kty":"RSA"}' })).toThrow(
      /SERVICE_IDENTITY_KEY: must be an Ed25519/,
    );
    expect(() => serviceIdentityFrom('gateway', { ...env, SERVICE_IDENTITY_KEYS: '{"keys":[]}' })).toThrow(/SERVICE_IDENTITY_KEYS/);
    // Its own key listed for another service, or missing from the set.
    expect(() => serviceIdentityFrom('billing-ledger', env)).toThrow(/for gateway, not billing-ledger/);
    const own = JSON.parse(env.SERVICE_IDENTITY_KEY) as { kid: string };
    const without = JSON.stringify({ keys: parseKeySet(env.SERVICE_IDENTITY_KEYS).filter((k) => k.kid !== own.kid) });
    expect(() => serviceIdentityFrom('gateway', { ...env, SERVICE_IDENTITY_KEYS: without })).toThrow(/has no key/);
    // A key set listing a kid twice, or a key for a stranger service.
    const dup = JSON.stringify({ keys: [publicJwkOf('gateway'), publicJwkOf('gateway')] });
    expect(() => parseKeySet(dup)).toThrow(/unique/);
    expect(() => parseKeySet(JSON.stringify({ keys: [{ ...publicJwkOf('gateway'), service: 'mallory' }] }))).toThrow();
    // Inline or from a file, never both.
    expect(() => serviceIdentityFrom('gateway', { ...env, SERVICE_IDENTITY_KEYS_FILE: '/x' })).toThrow(/not both/);
    expect(
      serviceIdentityFrom(
        'gateway',
        { SERVICE_IDENTITY_KEY: env.SERVICE_IDENTITY_KEY, SERVICE_IDENTITY_KEYS_FILE: '/keys.json' },
        () => env.SERVICE_IDENTITY_KEYS,
      ).signer.service,
    ).toBe('gateway');
  });
});

describe('the caller gate', () => {
  const ping = endpoint<{ ok: true }>()({
    method: 'POST',
    callers: ['gateway'],
    route: '/internal/v1/things/:id',
    params: { id: z.string() },
  });
  // A route listed for nobody (a door kept shut while its callers change) is refused to every service.
  const shut = endpoint<{ ok: true }>()({
    method: 'POST',
    callers: [],
    route: '/internal/v1/accounts/:tenantId/shut',
    params: { tenantId: z.string() },
  });
  const app = express();
  app.use(express.json());
  const refused: unknown[] = [];
  app.use(
    callerGate({
      verifier: new CallerVerifier('billing-ledger', parseKeySet(testKeySet())),
      endpoints: [ping, shut],
      onRefused: (r) => refused.push(r),
    }),
  );
  app.post('/internal/v1/things/:id', (_req, res) => res.json({ ok: true, caller: res.locals['caller'] }));
  app.post('/internal/v1/unlisted', (_req, res) => res.json({ reached: true }));
  app.get('/healthz', (_req, res) => res.json({ status: 'ok' }));
  app.use(errorHandler(() => undefined));
  const as = (caller: Parameters<typeof serviceToken>[0]) => `Bearer ${serviceToken(caller, 'billing-ledger')}`;

  it('answers 401 without an identity, 403 to a service the route does not name, and passes a named one on', async () => {
    const none = await request(app).post('/internal/v1/things/1').send({});
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    const renderer = await request(app).post('/internal/v1/things/1').set('Authorization', as('browser-renderer')).send({});
    expect(renderer.status).toBe(403);
    expect(renderer.body).toMatchObject({ code: 'FORBIDDEN' });
    const gateway = await request(app).post('/internal/v1/things/1').set('Authorization', as('gateway')).send({});
    expect(gateway.status).toBe(200);
    expect(gateway.body.caller).toMatchObject({ service: 'gateway' });
    // Express's own matching is case-insensitive and takes a trailing slash: so is the gate's.
    expect((await request(app).post('/INTERNAL/v1/things/1/').set('Authorization', as('browser-renderer')).send({})).status).toBe(403);
  });

  it('refuses a route no service may call to every service, and never reaches a route the contracts do not list', async () => {
    for (const caller of ['gateway', 'fetch-orchestrator', 'billing-ledger'] as const)
      expect((await request(app).post('/internal/v1/accounts/t/shut').set('Authorization', as(caller)).send({})).status).toBe(403);
    expect((await request(app).post('/internal/v1/unlisted').set('Authorization', as('gateway')).send({})).status).toBe(404);
    expect((await request(app).post('/internal/v1/unlisted').send({})).status).toBe(401);
    // Probes stay open.
    expect((await request(app).get('/healthz')).status).toBe(200);
    expect(refused).toContainEqual(expect.objectContaining({ status: 403, reason: 'caller_not_named', caller: 'browser-renderer' }));
  });

  it('matches route patterns one segment per parameter', () => {
    expect(routePattern(orchestratorApi.renderJobResult.route).test('/internal/v1/render-jobs/abc/result')).toBe(true);
    expect(routePattern(orchestratorApi.renderJobResult.route).test('/internal/v1/render-jobs/a/b/result')).toBe(false);
    expect(routePattern(orchestratorApi.readRequest.route).test('/internal/v1/requests/x/events')).toBe(false);
  });
});

describe('the gate in the HTTP shell', () => {
  it('refuses a caller without an identity before reading its body', async () => {
    const metrics = createMetrics('kit_gate_shell');
    const shell = createHttpShell({
      metrics,
      log: createLogger('test', 'silent'),
      readiness: [],
      jsonLimit: '1kb',
      gate: callerGate({ verifier: new CallerVerifier('billing-ledger', parseKeySet(testKeySet())), endpoints: [ledgerApi.grant] }),
    });
    shell.app.post(ledgerApi.grant.route, (_req, res) => res.status(201).json({ ok: true }));
    const app = shell.seal();
    const big = { memo: 'x'.repeat(10_000) };
    // Anonymous: 401, not 413 (the body was never parsed).
    expect((await request(app).post('/internal/v1/accounts/t/grants').send(big)).status).toBe(401);
    const asGateway = `Bearer ${serviceToken('gateway', 'billing-ledger')}`;
    expect((await request(app).post('/internal/v1/accounts/t/grants').set('Authorization', asGateway).send(big)).status).toBe(413);
    expect((await request(app).post('/internal/v1/accounts/t/grants').set('Authorization', asGateway).send({})).status).toBe(201);
    expect((await request(app).get('/readyz')).status).toBe(200);
  });
});

import { createHash, createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { INTERNAL_APIS, type AnyInternalEndpoint } from '@wdr/contracts';
import { SERVICE_NAMES, type ServiceName } from './services.js';

/**
 * Service identities for tests: one Ed25519 key per service, handed to the services a test starts
 * (startFleet, startServiceProcess, or an in-process env via `identityEnvOf`), so a test can call an
 * internal route as a named service, with a real token the service verifies like any other (no
 * switch turns the check off). The test keys are fixed (each derived from its service's name), so
 * every process of a run agrees on them: a shared fleet started by jest's global setup and the
 * workers that call it. They are test material only: nothing outside tests reads them.
 */
interface TestKey {
  kid: string;
  privateKey: KeyObject;
  jwk: { kty: 'OKP'; crv: 'Ed25519'; x: string; d: string };
}

let keys: Map<ServiceName, TestKey> | undefined;

function testKeys(): Map<ServiceName, TestKey> {
  keys ??= new Map(
    SERVICE_NAMES.map((s) => [s, seededTestKey(`${s}.test`, createHash('sha256').update(`wdr test identity ${s}`).digest())]),
  );
  return keys;
}

/** The Ed25519 key whose 32-byte private seed is `seed` (PKCS#8: a fixed prefix, then the seed). */
function seededTestKey(kid: string, seed: Buffer): TestKey {
  const privateKey = createPrivateKey({
    key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const jwk = privateKey.export({ format: 'jwk' }) as { x: string; d: string };
  return { kid, privateKey, jwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d } };
}

/** A fresh Ed25519 key under `kid` (a rotation's new key, or a stranger's key). */
export function newTestKey(kid: string): TestKey {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' }) as { x: string; d: string };
  return { kid, privateKey, jwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d } };
}

export function testKeyOf(service: ServiceName): TestKey {
  return testKeys().get(service)!;
}

/** The public JWK of a key, naming its service, as the key set lists it. */
export function publicJwkOf(service: ServiceName, key: TestKey = testKeyOf(service)) {
  return { kty: 'OKP', crv: 'Ed25519', x: key.jwk.x, kid: key.kid, service };
}

/** The fleet's key set (SERVICE_IDENTITY_KEYS): every service's test key, plus `extra`. */
export function testKeySet(extra: ReturnType<typeof publicJwkOf>[] = []): string {
  return JSON.stringify({ keys: [...SERVICE_NAMES.map((s) => publicJwkOf(s)), ...extra] });
}

/** The identity variables of `service` (its private key, the fleet's key set), for its env. */
export function identityEnvOf(service: ServiceName): { SERVICE_IDENTITY_KEY: string; SERVICE_IDENTITY_KEYS: string } {
  const k = testKeyOf(service);
  return { SERVICE_IDENTITY_KEY: JSON.stringify({ ...k.jwk, kid: k.kid }), SERVICE_IDENTITY_KEYS: testKeySet() };
}

const b64url = (v: Buffer | string) => Buffer.from(v).toString('base64url');

/**
 * A service token as `caller` signs it for `audience` (EdDSA JWT: iss, aud, iat, exp, kid); the
 * options forge the broken ones a gate must refuse (expired, another audience, another key).
 */
export function serviceToken(
  caller: ServiceName,
  audience: string,
  opts: { ttlSeconds?: number; issuedSecondsAgo?: number; key?: TestKey; iss?: string; alg?: string } = {},
): string {
  const key = opts.key ?? testKeyOf(caller);
  const iat = Math.floor(Date.now() / 1000) - (opts.issuedSecondsAgo ?? 0);
  const header = b64url(JSON.stringify({ alg: opts.alg ?? 'EdDSA', kid: key.kid, typ: 'JWT' }));
  const payload = b64url(JSON.stringify({ iss: opts.iss ?? caller, aud: audience, iat, exp: iat + (opts.ttlSeconds ?? 60) }));
  const signature = sign(null, Buffer.from(`${header}.${payload}`), createPrivateKey({ key: key.jwk, format: 'jwk' }));
  return `${header}.${payload}.${b64url(signature)}`;
}

/** `Authorization` header value for a call from `caller` to `audience`. */
export function bearer(caller: ServiceName, audience: string): string {
  return `Bearer ${serviceToken(caller, audience)}`;
}

/** Credentials for a ServiceClient (`createServiceClient({ identity })`): calls signed as `caller`. */
export function testCallerCredentials(caller: ServiceName) {
  return { service: caller, tokenFor: async (audience: string) => serviceToken(caller, audience) };
}

function routeMatches(route: string, path: string): boolean {
  const re = new RegExp(`^${route.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '[^/]+')}/?$`, 'i');
  return re.test(path.split('?')[0]!);
}

/** The first service `callee`'s route for this method and path names (what a test calls it as). */
export function namedCallerOf(callee: keyof typeof INTERNAL_APIS, method: string, path: string): ServiceName {
  const eps = Object.values(INTERNAL_APIS[callee]) as AnyInternalEndpoint[];
  const ep = eps.find((e) => e.method === method.toUpperCase() && routeMatches(e.route, path));
  if (!ep) throw new Error(`${callee} has no internal route ${method} ${path}`);
  const caller = ep.callers[0];
  if (!caller) throw new Error(`${callee}'s ${method} ${ep.route} names no caller: no service may call it`);
  return caller;
}

interface Signable<T> {
  set(field: string, value: string): T;
}
type Agent<R extends Signable<R>> = { get(path: string): R; post(path: string): R };

/**
 * A supertest agent (`request(app)` or `request(url)`) whose calls of `callee`'s internal routes
 * (`/internal/...`) carry a token: signed as `caller`, or, without one, as the first service the called route names
 * in `@wdr/contracts`.
 */
export function internalAgent<R extends Signable<R>, A extends Agent<R>>(
  agent: A,
  callee: keyof typeof INTERNAL_APIS,
  caller?: ServiceName,
): A {
  const wrap =
    (method: 'get' | 'post') =>
    (path: string): R =>
      // Probes (and anything outside /internal/) go unsigned, as Kubernetes and Prometheus call them.
      path.startsWith('/internal/')
        ? agent[method](path).set('Authorization', bearer(caller ?? namedCallerOf(callee, method, path), callee))
        : agent[method](path);
  return new Proxy(agent, {
    get: (target, prop, receiver) => (prop === 'get' || prop === 'post' ? wrap(prop) : Reflect.get(target, prop, receiver)),
  });
}

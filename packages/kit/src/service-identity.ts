import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { errors as joseErrors, importJWK, jwtVerify, SignJWT, type CryptoKey, type JWK } from 'jose';
import { z } from 'zod';
import { isServiceName, type AnyInternalEndpoint, type ServiceName } from '@wdr/contracts';
import { PublicError } from './errors.js';

/**
 * Who calls an internal route (`/internal/v1/*`), proved by a short-lived token: an EdDSA (Ed25519)
 * JWT the calling service signs with its own private key, `iss` = the caller, `aud` = the callee,
 * `iat`/`exp` 60 s apart, `kid` naming the key. The callee holds the public key set of the fleet
 * (SERVICE_IDENTITY_KEYS), in which each key names the service it belongs to; it verifies the
 * signature with `jose`, the audience (itself), the expiry, and that the key belongs to `iss`. Then
 * the route's `callers` (in `@wdr/contracts`) decide: another service is refused with 403.
 *
 * Rotation: a service's new public key is added to the key set beside the old one (both verify),
 * the service then signs with the new private key, and once its old tokens expired (60 s) the old
 * public key is removed: its tokens are refused from then on (docs/operations.md).
 */

/** Lifetime of a token; the signer renews a cached token once less than half of it is left. */
export const TOKEN_TTL_SECONDS = 60;
/** Clock skew tolerated between two services' clocks. */
export const CLOCK_TOLERANCE_SECONDS = 5;
const ALG = 'EdDSA';
/** The header the token travels in: `Authorization: Bearer <token>`. */
export const IDENTITY_HEADER = 'authorization';

/** A public key of the key set: an Ed25519 JWK with its `kid` and the service it belongs to. */
export interface ServicePublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  /** The service whose tokens this key verifies. */
  service: ServiceName;
}

/** A service's private key: an Ed25519 JWK (with `d`) and its `kid`. */
export interface ServicePrivateJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  d: string;
  kid: string;
}

const b64url = z.string().regex(/^[A-Za-z0-9_-]+$/);
const kid = z.string().regex(/^[A-Za-z0-9._:-]{1,100}$/);
const serviceName = z.string().refine(isServiceName, 'not a service of the fleet');

const PrivateJwk = z.object({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), x: b64url, d: b64url, kid });
const PublicJwk = z.object({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), x: b64url, kid, service: serviceName });
const KeySet = z
  .object({ keys: z.array(PublicJwk).min(1) })
  .refine((s) => new Set(s.keys.map((k) => k.kid)).size === s.keys.length, 'every kid must be unique');

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Parses SERVICE_IDENTITY_KEY: one private JWK (JSON). */
export function parsePrivateJwk(text: string): ServicePrivateJwk {
  const parsed = PrivateJwk.safeParse(jsonOf(text));
  if (!parsed.success) throw new Error('must be an Ed25519 private JWK with kid (JSON: kty OKP, crv Ed25519, x, d, kid)');
  return parsed.data;
}

/** Parses SERVICE_IDENTITY_KEYS: the public key set (JSON `{"keys": [{kty, crv, x, kid, service}, ...]}`). */
export function parseKeySet(text: string): ServicePublicJwk[] {
  const parsed = KeySet.safeParse(jsonOf(text));
  if (!parsed.success)
    throw new Error(
      `must be a JSON key set {"keys":[{"kty":"OKP","crv":"Ed25519","x":…,"kid":…,"service":…}]}: ${parsed.error.issues[0]?.message ?? ''}`,
    );
  return parsed.data.keys as ServicePublicJwk[];
}

/**
 * The configuration every service spreads into its env schema (`...identityEnv`): each key inline
 * or from a file (`_FILE`, a mounted Secret). Parsed and cross-checked by `serviceIdentityFrom` when
 * the service builds its dependencies, so a missing or wrong key stops it at boot.
 */
export const identityEnv = {
  /** This service's private key: an Ed25519 JWK with its kid (JSON), from the service's own Secret. */
  SERVICE_IDENTITY_KEY: z.string().optional(),
  SERVICE_IDENTITY_KEY_FILE: z.string().optional(),
  /** The fleet's public keys (JSON key set, each key naming its service), from the shared Secret. */
  SERVICE_IDENTITY_KEYS: z.string().optional(),
  SERVICE_IDENTITY_KEYS_FILE: z.string().optional(),
};

export interface IdentityEnv {
  SERVICE_IDENTITY_KEY?: string | undefined;
  SERVICE_IDENTITY_KEY_FILE?: string | undefined;
  SERVICE_IDENTITY_KEYS?: string | undefined;
  SERVICE_IDENTITY_KEYS_FILE?: string | undefined;
}

function inlineOrFile(env: IdentityEnv, name: 'SERVICE_IDENTITY_KEY' | 'SERVICE_IDENTITY_KEYS', read: (path: string) => string): string {
  const inline = env[name];
  const file = env[`${name}_FILE`];
  if (inline && file) throw new Error(`set ${name} or ${name}_FILE, not both`);
  if (inline) return inline;
  if (file) return read(file);
  throw new Error(`${name} (or ${name}_FILE) is required: every internal call carries the calling service's identity (docs/operations.md)`);
}

/** What a ServiceClient needs to present its service's identity to a callee. */
export interface CallerCredentials {
  /** The calling service (`iss`). */
  readonly service: ServiceName;
  /** A token for calls to `audience`, valid for at least half its lifetime. */
  tokenFor(audience: string): Promise<string>;
}

/** Signs this service's tokens with its private key; one token per audience, reused until half its lifetime is gone. */
export class ServiceSigner implements CallerCredentials {
  private key: Promise<CryptoKey | Uint8Array> | undefined;
  private readonly cache = new Map<string, { token: string; renewAt: number }>();

  constructor(
    readonly service: ServiceName,
    private readonly jwk: ServicePrivateJwk,
    private readonly ttlSeconds = TOKEN_TTL_SECONDS,
  ) {}

  get kid(): string {
    return this.jwk.kid;
  }

  async tokenFor(audience: string): Promise<string> {
    const now = Date.now();
    const cached = this.cache.get(audience);
    if (cached && cached.renewAt > now) return cached.token;
    this.key ??= importJWK({ ...this.jwk, alg: ALG } as JWK, ALG);
    const iat = Math.floor(now / 1000);
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: ALG, kid: this.jwk.kid, typ: 'JWT' })
      .setIssuer(this.service)
      .setAudience(audience)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.ttlSeconds)
      .sign(await this.key);
    this.cache.set(audience, { token, renewAt: now + (this.ttlSeconds * 1000) / 2 });
    return token;
  }
}

/** Why a token was refused (logged and counted; the caller only sees 401). */
export type RefusalReason = 'missing' | 'malformed' | 'unknown_key' | 'bad_signature' | 'wrong_audience' | 'expired' | 'bad_claims';

export class IdentityRefused extends Error {
  constructor(readonly reason: RefusalReason) {
    super(`service identity refused: ${reason}`);
  }
}

/** Most accepted tokens a verifier remembers (CallerVerifier.verified). */
const VERIFIED_CACHE_MAX = 1_024;

/** The verified caller of one request. */
export interface VerifiedCaller {
  service: ServiceName;
  kid: string;
}

/** Verifies tokens addressed to `audience` against the fleet's public key set. */
export class CallerVerifier {
  private readonly keys: Map<string, { service: ServiceName; key: Promise<CryptoKey | Uint8Array> }>;

  constructor(
    readonly audience: ServiceName,
    keySet: readonly ServicePublicJwk[],
  ) {
    this.keys = new Map(
      keySet.map((k) => [k.kid, { service: k.service, key: importJWK({ kty: k.kty, crv: k.crv, x: k.x, alg: ALG } as JWK, ALG) } as const]),
    );
  }

  /**
   * Tokens this verifier accepted, with their times: a caller reuses its token for half its life
   * (ServiceSigner), so every internal call after the first of that token is answered here instead
   * of by another signature verification (an Ed25519 verify and jose's parsing, per call). A hit is
   * accepted only while the token is still within its `exp` and its maximum age, checked as jose
   * checks them; past either it is verified again in full (and refused with the full reason).
   * Bounded: cleared when it holds VERIFIED_CACHE_MAX tokens (a handful live at any time).
   */
  private readonly verified = new Map<string, { caller: VerifiedCaller; iat: number; exp: number }>();

  /** The kids this verifier accepts, with their services (for readiness details and logs). */
  kids(): { kid: string; service: ServiceName }[] {
    return [...this.keys].map(([kid, k]) => ({ kid, service: k.service }));
  }

  async verify(authorization: string | undefined): Promise<VerifiedCaller> {
    if (!authorization) throw new IdentityRefused('missing');
    const m = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/.exec(authorization.trim());
    if (!m) throw new IdentityRefused('malformed');
    const token = m[1]!;
    const known = this.verified.get(token);
    if (known) {
      const now = Math.floor(Date.now() / 1000);
      if (
        known.exp > now - CLOCK_TOLERANCE_SECONDS &&
        now - known.iat - CLOCK_TOLERANCE_SECONDS <= TOKEN_TTL_SECONDS + CLOCK_TOLERANCE_SECONDS
      )
        return { ...known.caller };
      this.verified.delete(token);
    }
    let owner: ServiceName | undefined;
    let kidSeen = '';
    try {
      const { payload } = await jwtVerify(
        token,
        async (header) => {
          const entry = typeof header.kid === 'string' ? this.keys.get(header.kid) : undefined;
          if (!entry) throw new IdentityRefused('unknown_key');
          owner = entry.service;
          kidSeen = header.kid!;
          return entry.key;
        },
        {
          algorithms: [ALG],
          audience: this.audience,
          requiredClaims: ['iss', 'aud', 'iat', 'exp'],
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          // A token lives 60 s: one issued longer ago is refused whatever its exp says.
          maxTokenAge: TOKEN_TTL_SECONDS + CLOCK_TOLERANCE_SECONDS,
        },
      );
      // The key must be the issuer's own: a renderer's key cannot sign as the gateway.
      if (owner === undefined || payload.iss !== owner) throw new IdentityRefused('bad_claims');
      if (typeof payload.exp !== 'number' || typeof payload.iat !== 'number' || payload.exp - payload.iat > TOKEN_TTL_SECONDS)
        throw new IdentityRefused('bad_claims');
      const caller = { service: owner, kid: kidSeen };
      if (this.verified.size >= VERIFIED_CACHE_MAX) this.verified.clear();
      this.verified.set(token, { caller, iat: payload.iat, exp: payload.exp });
      return { ...caller };
    } catch (err) {
      if (err instanceof IdentityRefused) throw err;
      if (err instanceof joseErrors.JWTExpired) throw new IdentityRefused('expired');
      if (err instanceof joseErrors.JWTClaimValidationFailed) {
        if (err.claim === 'aud') throw new IdentityRefused('wrong_audience');
        throw new IdentityRefused('bad_claims');
      }
      if (err instanceof joseErrors.JWSSignatureVerificationFailed) throw new IdentityRefused('bad_signature');
      throw new IdentityRefused('malformed');
    }
  }
}

/** Signer and verifier of one service, from its configuration. */
export interface ServiceIdentity {
  signer: ServiceSigner;
  verifier: CallerVerifier;
}

/** This service's signer and verifier from its configuration; throws (at boot) on a missing, malformed or inconsistent key. */
export function serviceIdentityFrom(
  service: ServiceName,
  env: IdentityEnv,
  read: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): ServiceIdentity {
  let privateJwk: ServicePrivateJwk;
  let keySet: ServicePublicJwk[];
  try {
    privateJwk = parsePrivateJwk(inlineOrFile(env, 'SERVICE_IDENTITY_KEY', read));
  } catch (err) {
    throw new Error(`SERVICE_IDENTITY_KEY: ${(err as Error).message}`);
  }
  try {
    keySet = parseKeySet(inlineOrFile(env, 'SERVICE_IDENTITY_KEYS', read));
  } catch (err) {
    throw new Error(`SERVICE_IDENTITY_KEYS: ${(err as Error).message}`);
  }
  const own = keySet.find((k) => k.kid === privateJwk.kid);
  // A private key whose public half is missing from the set (or listed for another service) would
  // sign tokens every callee refuses: better to stop at boot than to fail every call.
  if (!own) throw new Error(`SERVICE_IDENTITY_KEYS has no key ${privateJwk.kid} (SERVICE_IDENTITY_KEY's kid)`);
  if (own.service !== service) throw new Error(`SERVICE_IDENTITY_KEYS lists key ${own.kid} for ${own.service}, not ${service}`);
  if (own.x !== privateJwk.x) throw new Error(`SERVICE_IDENTITY_KEYS has another public key under kid ${own.kid}`);
  return { signer: new ServiceSigner(service, privateJwk), verifier: new CallerVerifier(service, keySet) };
}

/** A route pattern (`/a/:id/b`) as a RegExp matching what Express matches: one segment per parameter, any case, an optional trailing slash. */
export function routePattern(route: string): RegExp {
  const escaped = route.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '[^/]+');
  return new RegExp(`^${escaped}/?$`, 'i');
}

/** Paths every service's HTTP shell answers without an identity (probes). */
const OPEN_PATHS = new Set(['/healthz', '/readyz']);

/**
 * The gate in front of a service's internal routes, mounted once by the kit for every service:
 *   - a path that is not a probe needs a valid service token, else 401 UNAUTHENTICATED;
 *   - then the path must be a route of `endpoints` (this service's table in `@wdr/contracts`), else
 *     404: a route mounted but not described there is never reached;
 *   - then every endpoint matching the method and path must name the caller, else 403 FORBIDDEN.
 * The verified caller is left in `res.locals.caller`.
 */
export function callerGate(opts: {
  verifier: CallerVerifier;
  endpoints: readonly AnyInternalEndpoint[];
  /** Called for each refusal (logging, metrics). */
  onRefused?: (refusal: { status: 401 | 403 | 404; reason: string; caller?: ServiceName; method: string; path: string }) => void;
}): RequestHandler {
  const table = opts.endpoints.map((ep) => ({ ep, pattern: routePattern(ep.route) }));
  // Async (Express 5 passes a rejection to the error handler): next() is called outside any promise callback.
  return async (req: Request, res: Response, next: NextFunction) => {
    if (OPEN_PATHS.has(req.path)) return next();
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const path = req.path;
    let caller: Awaited<ReturnType<CallerVerifier['verify']>>;
    try {
      caller = await opts.verifier.verify(req.header(IDENTITY_HEADER));
    } catch (err) {
      const reason = err instanceof IdentityRefused ? err.reason : 'malformed';
      opts.onRefused?.({ status: 401, reason, method, path });
      res.setHeader('WWW-Authenticate', 'Bearer realm="wdr-internal"');
      return next(new PublicError('UNAUTHENTICATED', 'A valid service identity token is required.'));
    }
    const matching = table.filter((t) => t.ep.method === method && t.pattern.test(path));
    if (matching.length === 0) {
      opts.onRefused?.({ status: 404, reason: 'no_such_route', caller: caller.service, method, path });
      return next(new PublicError('NOT_FOUND', 'No such resource.'));
    }
    if (!matching.every((t) => t.ep.callers.includes(caller.service))) {
      opts.onRefused?.({ status: 403, reason: 'caller_not_named', caller: caller.service, method, path });
      return next(new PublicError('FORBIDDEN', `${caller.service} may not call ${method} ${matching[0]!.ep.route}.`));
    }
    res.locals['caller'] = caller;
    next();
  };
}

/** A new Ed25519 key pair for `service` under `kid`: the private JWK for its Secret, the public one for the key set. */
export function generateServiceKey(service: ServiceName, kid: string): { privateJwk: ServicePrivateJwk; publicJwk: ServicePublicJwk } {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' }) as { x: string; d: string };
  return {
    privateJwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d, kid },
    publicJwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid, service },
  };
}

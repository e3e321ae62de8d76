import { z } from 'zod';
import { browserActionSchema } from '@wdr/contracts';
import { PublicError, type FieldIssue } from '@wdr/kit/errors';
import type {
  BrowserAction,
  CreateDataRequestBody,
  ProxyNetworkType,
  ProxySetting,
  RequestMode,
  ResourcePolicy,
} from '../../models/index.js';
import { ISO_3166_ALPHA2 } from './countries.js';
import { NUL_ISSUE, nulPaths } from './nul-strings.js';

/**
 * The body of POST /api/v1/data/requests (and of the cabinet's POST /api/v1/client/requests), rule
 * by rule from the spec's body table. tsoa checks types and ranges from the model first (that is
 * what the OpenAPI document shows); this schema is the complete rule set and the one the use case
 * trusts: URL syntax, header and cookie rules, country codes and cross-field rules live only here.
 */

export const REQUEST_MODES = [
  'direct',
  'auto',
  'browser',
  'http',
  'residential',
  'residential_browser',
] as const satisfies readonly RequestMode[];
export const PROXY_SETTINGS = ['random', 'off'] as const satisfies readonly ProxySetting[];
export const PROXY_TYPES = ['datacenter', 'residential', 'premium'] as const satisfies readonly ProxyNetworkType[];
export const RESOURCE_POLICIES = ['adaptive', 'compatible'] as const satisfies readonly ResourcePolicy[];

/** Implementation bounds the spec leaves open ("not shown"); documented in docs/api.md. */
export const BODY_LIMITS = {
  urlLength: 4096,
  timeoutMs: { min: 5_000, max: 300_000, default: 45_000 },
  cacheTtlSeconds: { min: 0, max: 3_600, default: 300 },
  /** max_credits_per_request: >= 1 by the spec; the ledger stores it as a 32-bit integer. */
  maxCredits: { min: 1, max: 2_147_483_647 },
  browserActions: 20,
  selectorLength: 500,
  userAgentLength: 1_000,
  headers: { count: 100, nameLength: 256, valueLength: 8_192 },
  cookies: { count: 100, nameLength: 256, valueLength: 4_096 },
  /** Serialized size of one browser action. */
  actionBytes: 4_096,
  waitForTextLength: 10_000,
} as const;

/**
 * Header names a tenant may not set, compared case-insensitively. Hop-by-hop headers (RFC 9110
 * §7.6.1) only make sense per connection; the rest are controlled by the platform's transport (the
 * HTTP client, the browser or the proxy route): message framing, the target host, content coding
 * the fetcher decodes, the Cookie header built from `cookies`, and forwarding headers that would
 * let a tenant speak for the proxy.
 */
export const FORBIDDEN_HEADERS: readonly string[] = [
  // hop-by-hop
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  // transport-controlled
  'host',
  'content-length',
  'expect',
  'http2-settings',
  'accept-encoding',
  'cookie',
  'forwarded',
  'via',
  'x-real-ip',
];
/** Whole families: Proxy-Authorization, Proxy-Authenticate, ...; X-Forwarded-For, -Host, -Proto, ... */
export const FORBIDDEN_HEADER_PREFIXES: readonly string[] = ['proxy-', 'x-forwarded-'];

const FORBIDDEN = new Set(FORBIDDEN_HEADERS);
/** RFC 9110 token: the only characters a field name may have (this also excludes every control character). */
const TOKEN_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** C0 controls, DEL and C1 controls. */
// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/;
/** A header value must also be sendable as HTTP/1.1 bytes: Latin-1 at most. */
// eslint-disable-next-line no-control-regex -- the range starts at U+0000 on purpose: everything beyond U+00FF
const BEYOND_LATIN1_RE = /[^\u0000-\u00ff]/;

export function isForbiddenHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return FORBIDDEN.has(lower) || FORBIDDEN_HEADER_PREFIXES.some((p) => lower.startsWith(p));
}

type Ctx = z.core.$RefinementCtx<Record<string, string>>;

function checkEntries(rec: Record<string, string>, ctx: Ctx, kind: 'headers' | 'cookies'): void {
  const limits = BODY_LIMITS[kind];
  const names = Object.keys(rec);
  if (names.length > limits.count) {
    ctx.addIssue({ code: 'custom', message: `at most ${limits.count} entries` });
    return;
  }
  const seen = new Set<string>();
  for (const name of names) {
    const value = rec[name]!;
    const issue = (message: string) => ctx.addIssue({ code: 'custom', path: [name], message });
    if (name.length === 0 || name.length > limits.nameLength) issue(`name length must be 1..${limits.nameLength}`);
    else if (CONTROL_RE.test(name)) issue('name must not contain control characters');
    else if (!TOKEN_RE.test(name)) issue("name must be an HTTP token (letters, digits and !#$%&'*+-.^_`|~)");
    else if (kind === 'headers' && isForbiddenHeader(name)) {
      issue(name.toLowerCase() === 'cookie' ? 'set cookies through the cookies field' : 'is a hop-by-hop or transport-controlled header');
    } else if (seen.has(name.toLowerCase())) issue('duplicate name (names are case-insensitive)');
    seen.add(name.toLowerCase());

    if (typeof value !== 'string') continue; // reported by the record's value type
    if (value.length > limits.valueLength) issue(`value length must be <= ${limits.valueLength}`);
    else if (CONTROL_RE.test(value)) issue('value must not contain control characters');
    else if (BEYOND_LATIN1_RE.test(value)) issue('value must contain only ISO-8859-1 characters');
    else if (kind === 'cookies' && value.includes(';')) issue('value must not contain ";"');
  }
}

const stringType = { error: (iss: { input?: unknown }) => (iss.input === undefined ? 'is required' : 'must be a string') };

const boundedString = (min: number, max: number) =>
  z.string(stringType).min(min, `length must be ${min}..${max}`).max(max, `length must be ${min}..${max}`);

const intIn = (min: number, max: number) =>
  z.number({ error: 'must be an integer' }).int('must be an integer').min(min, `must be ${min}..${max}`).max(max, `must be ${min}..${max}`);

const targetUrl = z
  .string(stringType)
  .min(1, 'must be an absolute http(s) URL')
  .max(BODY_LIMITS.urlLength, `length must be <= ${BODY_LIMITS.urlLength}`)
  .superRefine((value, ctx) => {
    let u: URL;
    try {
      u = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute http(s) URL' });
      return;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: 'scheme must be http or https' });
    else if (!u.hostname) ctx.addIssue({ code: 'custom', message: 'must name a host' });
    else if (u.username || u.password) ctx.addIssue({ code: 'custom', message: 'must not contain credentials' });
    else if (CONTROL_RE.test(value) || /\s/.test(value))
      ctx.addIssue({ code: 'custom', message: 'must not contain whitespace or control characters' });
  });

const jsonSize = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

/** One action of the declared set (@wdr/contracts, version BROWSER_ACTIONS_VERSION), each at most 4 KiB as JSON. */
const browserAction = browserActionSchema.refine(
  (a) => jsonSize(a) <= BODY_LIMITS.actionBytes,
  `must be at most ${BODY_LIMITS.actionBytes} bytes as JSON`,
);

const entries = (kind: 'headers' | 'cookies') =>
  z.record(z.string(), z.string({ error: 'must be a string' })).superRefine((rec, ctx) => checkEntries(rec, ctx, kind));

const optionalBool = z.boolean({ error: 'must be a boolean' }).optional();

const bodyShape = {
  url: targetUrl,
  mode: z.enum(REQUEST_MODES, { error: `must be one of ${REQUEST_MODES.join(', ')}` }).optional(),
  geo_country: z
    .string(stringType)
    .length(2, 'must be exactly 2 letters')
    .transform((v) => v.toUpperCase())
    .refine((v) => ISO_3166_ALPHA2.has(v), 'must be an ISO 3166-1 alpha-2 country code')
    .optional(),
  max_credits_per_request: intIn(BODY_LIMITS.maxCredits.min, BODY_LIMITS.maxCredits.max).optional(),
  proxy: z.enum(PROXY_SETTINGS, { error: `must be one of ${PROXY_SETTINGS.join(', ')}` }).optional(),
  proxy_type: z.enum(PROXY_TYPES, { error: `must be one of ${PROXY_TYPES.join(', ')}` }).optional(),
  headers: entries('headers').optional(),
  cookies: entries('cookies').optional(),
  timeout_ms: intIn(BODY_LIMITS.timeoutMs.min, BODY_LIMITS.timeoutMs.max).optional(),
  javascript: optionalBool,
  resource_policy: z.enum(RESOURCE_POLICIES, { error: `must be one of ${RESOURCE_POLICIES.join(', ')}` }).optional(),
  wait_for_selector: boundedString(1, BODY_LIMITS.selectorLength).optional(),
  // Sent as a header: refused like a header value (no control characters, Latin-1 only).
  user_agent: boundedString(1, BODY_LIMITS.userAgentLength)
    .refine((v) => !CONTROL_RE.test(v), 'must not contain control characters')
    .refine((v) => !BEYOND_LATIN1_RE.test(v), 'must contain only ISO-8859-1 characters')
    .optional(),
  result_text_selector: boundedString(1, BODY_LIMITS.selectorLength).optional(),
  wait_for_text: z
    .string({ error: 'must be a string or null' })
    .max(BODY_LIMITS.waitForTextLength, `length must be <= ${BODY_LIMITS.waitForTextLength}`)
    .nullable()
    .optional(),
  browser_actions: z
    .array(browserAction, { error: 'must be an array' })
    .max(BODY_LIMITS.browserActions, `at most ${BODY_LIMITS.browserActions} items`)
    .optional(),
  debug_artifacts: optionalBool,
  skip_cache: optionalBool,
  cache_ttl_seconds: intIn(BODY_LIMITS.cacheTtlSeconds.min, BODY_LIMITS.cacheTtlSeconds.max).optional(),
  extraction: z
    .strictObject(
      { recipe_id: z.uuid({ error: 'must be a uuid' }), version_id: z.uuid({ error: 'must be a uuid' }).optional() },
      { error: (iss) => (iss.code === 'unrecognized_keys' ? 'is not a field of extraction' : 'must be an object with recipe_id, or null') },
    )
    .nullable()
    .optional(),
};

export const submissionBodySchema = z
  .strictObject(bodyShape, { error: (iss) => (iss.code === 'unrecognized_keys' ? 'is not a field of this body' : 'must be a JSON object') })
  .superRefine((body, ctx) => {
    for (const path of nulPaths(body)) ctx.addIssue({ code: 'custom', path, message: NUL_ISSUE });
    if (body.proxy_type === 'premium' && body.proxy === 'off') {
      ctx.addIssue({ code: 'custom', path: ['proxy_type'], message: 'premium cannot be combined with proxy off' });
    }
    // A residential route is a proxy route: without a proxy it could only fail later.
    if (body.proxy_type === 'residential' && body.proxy === 'off') {
      ctx.addIssue({ code: 'custom', path: ['proxy_type'], message: 'residential cannot be combined with proxy off' });
    }
    if ((body.mode === 'residential' || body.mode === 'residential_browser') && body.proxy === 'off') {
      ctx.addIssue({ code: 'custom', path: ['mode'], message: `${body.mode} cannot be combined with proxy off` });
    }
    // A country is verified through the exit it leaves by: without a proxy there is none to verify.
    if (body.geo_country !== undefined && body.proxy === 'off') {
      ctx.addIssue({
        code: 'custom',
        path: ['geo_country'],
        message: 'cannot be combined with proxy off: a country is verified through a proxy exit',
      });
    }
  });

/** The body after validation, with the spec's defaults applied and geo_country upper-cased. */
export interface NormalizedSubmission {
  url: string;
  mode?: RequestMode;
  geo_country?: string;
  max_credits_per_request?: number;
  proxy?: ProxySetting;
  proxy_type?: ProxyNetworkType;
  headers?: Record<string, string>;
  cookies?: Record<string, string>;
  timeout_ms: number;
  javascript: boolean;
  resource_policy: ResourcePolicy;
  wait_for_selector?: string;
  user_agent?: string;
  result_text_selector?: string;
  wait_for_text?: string | null;
  browser_actions?: BrowserAction[];
  debug_artifacts: boolean;
  skip_cache: boolean;
  cache_ttl_seconds: number;
  extraction?: { recipe_id: string; version_id?: string | undefined } | null;
}

/**
 * Validate a submission body against the whole table and apply the defaults. Every problem is
 * reported at once, each with its field (`timeout_ms`, `headers.Host`, `browser_actions.3.type`).
 */
export function normalizeSubmission(body: unknown): NormalizedSubmission {
  const r = submissionBodySchema.safeParse(body);
  if (!r.success) {
    throw new PublicError('VALIDATION_FAILED', 'The request body is not valid.', { details: issuesToDetails(r.error.issues) });
  }
  const b = r.data;
  return {
    ...(b as Omit<typeof b, 'browser_actions'>),
    ...(b.browser_actions ? { browser_actions: b.browser_actions as BrowserAction[] } : {}),
    timeout_ms: b.timeout_ms ?? BODY_LIMITS.timeoutMs.default,
    javascript: b.javascript ?? true,
    resource_policy: b.resource_policy ?? 'adaptive',
    debug_artifacts: b.debug_artifacts ?? false,
    skip_cache: b.skip_cache ?? false,
    cache_ttl_seconds: b.cache_ttl_seconds ?? BODY_LIMITS.cacheTtlSeconds.default,
  };
}

/** Keep the CreateDataRequestBody model and this schema describing the same fields. */
export const SUBMISSION_FIELDS = Object.keys(bodyShape) as (keyof CreateDataRequestBody)[];

export function issuesToDetails(issues: readonly z.core.$ZodIssue[]): FieldIssue[] {
  const details: FieldIssue[] = [];
  for (const i of issues) {
    const path = i.path.map(String);
    if (i.code === 'unrecognized_keys') {
      for (const key of i.keys) details.push({ field: [...path, key].join('.'), issue: 'is not a field of this body' });
    } else {
      details.push({ field: path.join('.') || 'body', issue: i.message });
    }
  }
  return details;
}

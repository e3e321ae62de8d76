import { z } from 'zod';
import { browserActionSchema } from '../browser/actions.js';
import { PROXY_NETWORK_TYPES, RESOURCE_POLICIES, ROUTE_MODES } from '../vocabulary.js';
import { RenderUploadRef } from './render-upload.js';

/**
 * The internal HTTP contract between browser-renderer and fetch-orchestrator for one render job.
 *
 * `render.jobs` carries only the request id. The renderer then
 *   1. claims the job: POST {@link RENDER_PATHS.start} answers the job (full URL, options, route) and
 *      moves the request to `running` with a `request.running` event (stage `browser`), or tells the
 *      renderer to skip a request that is already terminal (a redelivery, a cancel);
 *   2. when the page shows a CAPTCHA widget and a solver is configured, asks before each solve:
 *      POST {@link RENDER_PATHS.captcha} has the ledger authorize the solve against
 *      max_credits_per_request and moves the request to `solving_captcha`; POST
 *      {@link RENDER_PATHS.captchaSolved} moves it back to `running` once the token is in the page;
 *   3. hands the outcome back: a completed page travels as raw bytes with its outcome in a header
 *      (POST `orchestratorApi.renderJobHandBack`, ./render-upload.ts: streamed into the orchestrator's
 *      result store, up to MAX_RESULT_BYTES; never through Kafka, never base64 in JSON), or, for an
 *      outcome too large for the header, as an upload (`renderUploadApi.renderJobUpload`) followed by
 *      POST {@link RENDER_PATHS.result} naming it; a failure is POST {@link RENDER_PATHS.result}
 *      alone. The orchestrator moves the page into the request's result and finishes the request in
 *      one transaction; a second result for a terminal request is acknowledged and ignored, so a
 *      repeated job never repeats its effects.
 */
export const RENDER_PATHS = {
  start: (requestId: string) => `/internal/v1/render-jobs/${requestId}/start`,
  result: (requestId: string) => `/internal/v1/render-jobs/${requestId}/result`,
  /** A CAPTCHA widget was found: may the renderer solve it (the ledger's ceiling)? See {@link RenderCaptchaBody}. */
  captcha: (requestId: string) => `/internal/v1/render-jobs/${requestId}/captcha`,
  /** The CAPTCHA was solved and its token handed to the page: the request runs on. */
  captchaSolved: (requestId: string) => `/internal/v1/render-jobs/${requestId}/captcha/solved`,
  /** Served by browser-renderer: one stored debug artifact of a failed request. */
  debugArtifact: (requestId: string, name: string) => `/internal/v1/debug-artifacts/${requestId}/${name}`,
} as const;

// Spelled once in ../vocabulary.ts; re-exported here for the importers of this module.
export { PROXY_NETWORK_TYPES, RESOURCE_POLICIES, ROUTE_MODES };

/**
 * How the browser reaches the target. Filled by the proxy layer; `proxy: null` goes direct and
 * `country: null` means no verified country (no timezone or geolocation emulation).
 */
export const RenderRoute = z.object({
  proxy: z
    .object({
      /** `http://host:port` of an HTTP(S) CONNECT proxy. */
      server: z.string().min(1),
      username: z.string().optional(),
      password: z.string().optional(),
    })
    .nullable(),
  /** ISO 3166-1 alpha-2 country the route was verified to exit in. */
  country: z.string().length(2).nullable(),
});
export type RenderRoute = z.infer<typeof RenderRoute>;

/** What the browser stage must do: the submission's browser-relevant options, defaults applied. */
export const RenderOptions = z.object({
  javascript: z.boolean(),
  timeout_ms: z.number().int().min(1000).max(300_000),
  user_agent: z.string().optional(),
  headers: z.record(z.string(), z.string()).default({}),
  cookies: z.record(z.string(), z.string()).default({}),
  wait_for_selector: z.string().optional(),
  wait_for_text: z.string().nullable().optional(),
  result_text_selector: z.string().optional(),
  resource_policy: z.enum(RESOURCE_POLICIES),
  browser_actions: z.array(browserActionSchema).default([]),
  debug_artifacts: z.boolean(),
});
export type RenderOptions = z.infer<typeof RenderOptions>;

export const RenderJob = z.object({
  request_id: z.uuid(),
  tenant_id: z.uuid(),
  /** 1 for the first browser attempt of this request; grows when a job is repeated. */
  attempt: z.number().int().min(1),
  /** The full target URL (kept sealed at rest by the orchestrator; never logged). */
  url: z.string().url(),
  route_mode: z.enum(ROUTE_MODES),
  /** Why the browser runs: the mode asked for it, or `auto` escalated from the HTTP stage. */
  reason: z.enum(['requested', 'escalated']),
  options: RenderOptions,
  route: RenderRoute,
  /** Largest body the result store takes; a bigger page fails with TARGET_TOO_LARGE. */
  max_result_bytes: z.number().int().min(1),
});
export type RenderJob = z.infer<typeof RenderJob>;

export const RenderStartAnswer = z.discriminatedUnion('state', [
  z.object({ state: z.literal('run'), job: RenderJob }),
  /** Nothing to do: the request is already terminal (finished, failed or cancelled). */
  z.object({ state: z.literal('skip'), status: z.string() }),
]);
export type RenderStartAnswer = z.infer<typeof RenderStartAnswer>;

const count = z.number().int().min(0);

/** CAPTCHA widgets the browser stage recognises (by their sitekey elements and iframes). */
export const CAPTCHA_KINDS = ['recaptcha_v2', 'hcaptcha', 'turnstile'] as const;
export type CaptchaKind = (typeof CAPTCHA_KINDS)[number];

/**
 * Proxy traffic of one render, counted at the socket between the renderer's local proxy and the
 * upstream proxy network. Present only when the route had a proxy. `measured: false` means the
 * counts could not be trusted (a connection whose counters were missing): the bytes are then not
 * zero, they are unknown, and must never be read or billed as zero.
 */
export const RenderTraffic = z.object({
  measured: z.boolean(),
  request_bytes: count,
  response_bytes: count,
});
export type RenderTraffic = z.infer<typeof RenderTraffic>;

/**
 * Aggregate diagnostics of one render; they end up in the request's `result_meta`. Never page
 * content, URLs, headers or cookies.
 */
export const RenderMeta = z.object({
  stage: z.literal('browser'),
  elapsed_ms: count,
  javascript: z.boolean(),
  resource_policy: z.object({
    requested: z.enum(RESOURCE_POLICIES),
    /** The mode the page ended in: `full` or `site-light`. */
    applied: z.enum(['full', 'site-light']),
    /** Requests blocked by the policy, by resource type (image, media, font, ...). */
    blocked_requests: z.record(z.string(), count),
  }),
  /** Requests the page made, by resource type. */
  requests: z.record(z.string(), count),
  actions: z.object({ run: count, failed: count, blocked: count, elapsed_ms: count }).optional(),
  /** Elements matched by result_text_selector. */
  text_matches: count.optional(),
  /** Challenge or block page markers seen in the rendered page. */
  challenge: z.boolean(),
  console_errors: count,
  /** The verified country the context emulated (timezone and geolocation), if any. */
  country: z.string().length(2).nullable(),
  /**
   * A CAPTCHA widget was seen on the page: its kind and the solves that put a token into the page
   * (0 when no solver is configured: the page is delivered as it stands, nothing is charged).
   */
  captcha: z.object({ kind: z.enum(CAPTCHA_KINDS), solves: count }).optional(),
});
export type RenderMeta = z.infer<typeof RenderMeta>;

/** What a failed request's debug artifacts are; the bytes stay with browser-renderer. */
export const DebugArtifactListing = z.object({
  items: z.array(z.object({ name: z.string(), content_type: z.string(), bytes: count })),
  expires_at: z.iso.datetime({ offset: true }),
});
export type DebugArtifactListing = z.infer<typeof DebugArtifactListing>;

/** Codes a browser stage fails with; tenants see them in `error.code` / `user_error.code`. */
export const RENDER_FAILURE_CODES = [
  'TARGET_BLOCKED',
  'TARGET_UNREACHABLE',
  'TARGET_TIMEOUT',
  'TARGET_SERVER_ERROR',
  'TARGET_TOO_LARGE',
  'WAIT_FOR_SELECTOR_TIMEOUT',
  'WAIT_FOR_TEXT_TIMEOUT',
  'INVALID_SELECTOR',
  'BROWSER_ACTION_FAILED',
  'PROTECTION_NOT_PASSED',
  'BROWSER_CRASHED',
  'BROWSER_UNAVAILABLE',
  /** The CAPTCHA solver failed or timed out (refunded). */
  'CAPTCHA_NOT_SOLVED',
  /** A CAPTCHA solve would pass max_credits_per_request: charged up to the ceiling, reason `budget_exhausted`. */
  'BUDGET_EXHAUSTED',
  /** The balance does not cover a CAPTCHA solve (refunded). */
  'INSUFFICIENT_CREDITS',
  /** Anything else the browser stage did not expect (logged by the renderer; refunded). */
  'RENDER_FAILED',
] as const;
export type RenderFailureCode = (typeof RENDER_FAILURE_CODES)[number];

/**
 * The codes a failed or cancelled request ends with (its tenant-facing `user_error.code`, a batch job's
 * `error.code`): the HTTP stage's failures, the browser stage's (RENDER_FAILURE_CODES), the proxy
 * route's, and the orchestrator's own. fetch-orchestrator's Termination is typed by it.
 */
export const REQUEST_ERROR_CODES = [
  ...RENDER_FAILURE_CODES,
  'TOO_MANY_REDIRECTS',
  'EXIT_FAILED',
  'PROXY_UNAVAILABLE',
  'PROXY_GEO_VERIFICATION_FAILED',
  'TARGET_EXPIRED',
  'INVALID_OPTIONS',
  'CANCELLED',
] as const;
export type RequestErrorCode = (typeof REQUEST_ERROR_CODES)[number];

export const RenderResult = z.discriminatedUnion('outcome', [
  z.object({
    outcome: z.literal('completed'),
    /** Status of the main document response. */
    status_code: z.number().int().min(100).max(599),
    content_type: z.string().nullable(),
    /**
     * The page, sent before as bytes (./render-upload.ts): the rendered DOM (`page.content()`, the
     * page as the browser ended with it) and the readable text of the page, or of the elements
     * matching result_text_selector.
     */
    upload: RenderUploadRef,
    meta: RenderMeta,
    traffic: RenderTraffic.optional(),
  }),
  z.object({
    outcome: z.literal('failed'),
    code: z.enum(RENDER_FAILURE_CODES),
    /** Safe to show the tenant: no internal detail. */
    message: z.string().max(1000),
    /** Whether the tenant's input caused it (a selector that never appears) rather than the platform or the target. */
    caused_by: z.enum(['tenant', 'target', 'platform']),
    status_code: z.number().int().min(100).max(599).optional(),
    meta: RenderMeta.partial().optional(),
    /** Present when the submission opted in to debug artifacts and they were stored. */
    debug_artifacts: DebugArtifactListing.optional(),
    traffic: RenderTraffic.optional(),
  }),
]);
export type RenderResult = z.infer<typeof RenderResult>;

export const RenderResultAnswer = z.object({
  /** False when the request was already terminal and the result was ignored. */
  accepted: z.boolean(),
  status: z.string(),
});
export type RenderResultAnswer = z.infer<typeof RenderResultAnswer>;

/**
 * Body of POST {@link RENDER_PATHS.captcha}: the widget found and the solves this render already
 * made; the orchestrator asks the ledger for solve `solves_so_far + 1` (step `captcha:<n>`), with
 * the proxy traffic measured so far, so the ceiling covers CAPTCHA and traffic alike.
 */
export const RenderCaptchaBody = z.object({
  captcha_kind: z.enum(CAPTCHA_KINDS),
  solves_so_far: count.max(100),
  traffic_bytes: count.optional(),
});
export type RenderCaptchaBody = z.infer<typeof RenderCaptchaBody>;

export const RenderCaptchaAnswer = z.discriminatedUnion('state', [
  /** Solve it: the request is `solving_captcha` now. */
  z.object({ state: z.literal('allowed') }),
  /** Do not solve: the render stops and fails with the reason's code (BUDGET_EXHAUSTED, INSUFFICIENT_CREDITS). */
  z.object({
    state: z.literal('refused'),
    reason: z.enum(['budget_exhausted', 'insufficient_credits']),
    projected_tokens: count,
    max_credits: count.nullable(),
  }),
  /** The request is already terminal (cancelled meanwhile): stop, the result will be ignored. */
  z.object({ state: z.literal('skip'), status: z.string() }),
]);
export type RenderCaptchaAnswer = z.infer<typeof RenderCaptchaAnswer>;

/** Body of POST {@link RENDER_PATHS.captchaSolved}: the solves made so far, this one included. */
export const RenderCaptchaSolvedBody = z.object({ captcha_kind: z.enum(CAPTCHA_KINDS), solves: count.min(1).max(100) });
export type RenderCaptchaSolvedBody = z.infer<typeof RenderCaptchaSolvedBody>;

/** A debug artifact as the internal read returns it (the gateway passes the bytes on). */
export const DebugArtifactBody = z.object({ content_type: z.string(), body_base64: z.string() });
export type DebugArtifactBody = z.infer<typeof DebugArtifactBody>;

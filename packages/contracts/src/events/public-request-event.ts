import type { components } from '../openapi/types.js';
import type { StoredRequestEvent } from '../internal/orchestrator.js';
import { VISIBLE_REQUEST_STATUSES } from '../vocabulary.js';

/**
 * The public, provider-neutral form of a stored request event: what a tenant may see of
 * `request.event_appended`: the gateway's history and SSE stream, and webhook-dispatcher's webhook
 * payloads, all use this one allow-list.
 */
type RequestEvent = components['schemas']['RequestEvent'];

const VISIBLE_STATUSES: ReadonlySet<string> = new Set(VISIBLE_REQUEST_STATUSES);

/**
 * What of an event payload may reach a tenant, field by field. Anything not listed is dropped:
 * internal payloads may grow fields (proxy vendors, internal hosts, final URLs with paths) without
 * leaking them. `true` keeps a scalar; a nested table keeps that object's listed fields.
 */
type Allow = { readonly [field: string]: true | Allow };

const ERROR: Allow = { code: true, message: true, reason: true };
const PUBLIC_FIELDS: Allow = {
  route_mode: true,
  batch_id: true,
  base_tokens: true,
  charged_tokens: true,
  captcha_tokens: true,
  stage: true,
  attempt: true,
  reason: true,
  from: true,
  to: true,
  protection: true,
  escalated: true,
  captcha_kind: true,
  solve: true,
  solves: true,
  cached: true,
  age_seconds: true,
  error: ERROR,
  result: {
    stage: true,
    status_code: true,
    content_type: true,
    bytes: true,
    redirects: true,
    elapsed_ms: true,
    cached: true,
    country: true,
  },
};

function pick(value: Record<string, unknown>, allow: Allow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, rule] of Object.entries(allow)) {
    const v = value[field];
    if (v === undefined) continue;
    if (rule === true) {
      if (v === null || typeof v === 'number' || typeof v === 'boolean') out[field] = v;
      else if (typeof v === 'string') out[field] = redactUrls(v);
    } else if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      out[field] = pick(v as Record<string, unknown>, rule);
    }
  }
  return out;
}

/** URLs inside free text keep only their origin: paths and queries are tenant secrets. */
export function redactUrls(text: string): string {
  return text.replace(/\bhttps?:\/\/[^\s"'<>]+/gi, (m) => {
    try {
      return new URL(m).origin;
    } catch {
      return '[url]';
    }
  });
}

export function publicRequestEventOf(e: StoredRequestEvent): RequestEvent {
  return {
    id: e.event_id,
    type: e.kind,
    status: (VISIBLE_STATUSES.has(e.status) ? e.status : 'running') as RequestEvent['status'],
    created_at: e.created_at,
    data: pick(e.payload, PUBLIC_FIELDS),
  };
}

import { TERMINAL_REQUEST_STATUSES, VISIBLE_REQUEST_STATUSES, type StoredRequestEvent } from '@wdr/contracts';
import type { DataVisibleStatus } from '../../api/models.js';
import type { RequestEvent } from '../../api/models-reads.js';

/**
 * A request event as the orchestrator stores it and publishes it on `request.lifecycle`
 * (`request.event_appended`): the internal record, before it is made public.
 */
export type { StoredRequestEvent };

export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(TERMINAL_REQUEST_STATUSES);

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
  // request.escalated (auto moved from the HTTP stage to the browser) and request.protected:
  // `protection` names the target's anti-bot vendor (never a provider of ours).
  from: true,
  to: true,
  protection: true,
  escalated: true,
  // request.solving_captcha / request.captcha_solved: the widget kind (recaptcha_v2, hcaptcha,
  // turnstile) and the solve count; never the solver.
  captcha_kind: true,
  solve: true,
  solves: true,
  // request.cache_hit: served from the result cache, and how old the copy was.
  cached: true,
  age_seconds: true,
  error: ERROR,
  // `country`: the exit country verified for geo_country.
  result: { stage: true, status_code: true, content_type: true, bytes: true, redirects: true, elapsed_ms: true, cached: true, country: true },
};

function pick(value: Record<string, unknown>, allow: Allow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, rule] of Object.entries(allow)) {
    const v = value[field];
    if (v === undefined) continue;
    if (rule === true) {
      if (v === null || typeof v === 'number' || typeof v === 'boolean') out[field] = v;
      else if (typeof v === 'string') out[field] = redactText(v);
    } else if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      out[field] = pick(v as Record<string, unknown>, rule);
    }
  }
  return out;
}

/** URLs inside free text keep only their origin: paths and queries are tenant secrets. */
function redactText(text: string): string {
  return text.replace(/\bhttps?:\/\/[^\s"'<>]+/gi, (m) => {
    try {
      return new URL(m).origin;
    } catch {
      return '[url]';
    }
  });
}

/** The public, provider-neutral form of one event: the history entry and the SSE `data`, identical. */
export function publicEventOf(e: StoredRequestEvent): RequestEvent {
  return {
    id: e.event_id,
    type: e.kind,
    status: (VISIBLE_STATUSES.has(e.status) ? e.status : 'running') as DataVisibleStatus,
    created_at: e.created_at,
    data: pick(e.payload, PUBLIC_FIELDS),
  };
}

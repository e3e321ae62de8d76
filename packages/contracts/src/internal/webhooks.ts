import { z } from 'zod';
import { endpoint } from './endpoint.js';

/**
 * The internal HTTP API of webhook-dispatcher (`/internal/v1/*`): a tenant's webhook endpoints,
 * their signing secrets, their delivery attempts and manual redelivery. Every call names the
 * tenant; another tenant's endpoint is NOT_FOUND, exactly like a missing one. The gateway calls it
 * for the cabinet and browser-workflow routes (issue 10). Writes other than create may carry an
 * `operation_id` (EndpointWriteBody); a create repeats safely under its `endpoint_id`.
 */

/**
 * What an endpoint can subscribe to: the terminal and billing kinds of a request's history
 * (`request.event_appended` on `request.lifecycle`, by its `kind`), the tenant's balance alerts
 * (`billing.alerts`), and the dispatcher's own `webhook.endpoint_disabled` (sent to the tenant's
 * other endpoints that subscribe to it when one is disabled).
 */
export const WEBHOOK_EVENT_TYPES = [
  'request.accepted',
  'request.running',
  'request.completed',
  'request.failed',
  'request.cancelled',
  'tokens.settled',
  'tokens.refunded',
  'extraction.completed',
  'extraction.failed',
  'billing.balance_low',
  'billing.balance_exhausted',
  'webhook.endpoint_disabled',
  'batch.completed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Why an endpoint is disabled. */
export const WEBHOOK_DISABLED_REASONS = ['manual', 'gone', 'sustained_failure'] as const;
export type WebhookDisabledReason = (typeof WEBHOOK_DISABLED_REASONS)[number];

const uuid = z.uuid();
/** Project and environment are opaque identifiers until projects exist (issue 10, the model). */
const scopeId = z.string().min(1).max(100);

export const WebhookEndpointCreateBody = z.object({
  tenant_id: uuid,
  project_id: scopeId.nullable().default(null),
  environment_id: scopeId.nullable().default(null),
  url: z.string().min(1).max(2048),
  event_types: z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1).max(WEBHOOK_EVENT_TYPES.length),
  description: z.string().max(500).nullable().default(null),
  /**
   * Create it under this id (the gateway derives it from the tenant's Idempotency-Key): a create
   * that repeats the id answers the tenant's existing endpoint with its current secret (a retry
   * whose first answer was lost), whatever the rest of the body.
   */
  endpoint_id: uuid.optional(),
});
export type WebhookEndpointCreateBody = z.infer<typeof WebhookEndpointCreateBody>;

/**
 * What every endpoint write (update, disable, delete, secret rotation) may carry besides the tenant.
 *
 * `operation_id`: the caller's id for this write (the gateway derives it from tenant +
 * Idempotency-Key). The dispatcher records the applied write under it, in the write's transaction,
 * for IDEMPOTENCY_RETENTION_HOURS: the same write again under that id answers the recorded answer
 * without doing anything (a deletion answers `{deleted: true}` though the endpoint is gone; a
 * rotation answers the same new secret, it made only one), and another write under it (another
 * endpoint, kind or body, or another tenant) is IDEMPOTENCY_CONFLICT. Without it every call is new.
 *
 * `in_scope`: apply it only to an endpoint of this project and environment; any other is NOT_FOUND,
 * like a missing one (the gateway's routes name the scope in the path).
 */
const endpointWrite = {
  tenant_id: uuid,
  operation_id: uuid.optional(),
  in_scope: z.object({ project_id: scopeId, environment_id: scopeId }).optional(),
};

export const EndpointWriteBody = z.object(endpointWrite);
export type EndpointWriteBody = z.infer<typeof EndpointWriteBody>;

/** Changes to an endpoint; `enabled: true` re-enables a disabled one (its pending messages resume). */
export const WebhookEndpointUpdateBody = z.object({
  ...endpointWrite,
  url: z.string().min(1).max(2048).optional(),
  event_types: z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1).max(WEBHOOK_EVENT_TYPES.length).optional(),
  description: z.string().max(500).nullable().optional(),
  enabled: z.literal(true).optional(),
});
export type WebhookEndpointUpdateBody = z.infer<typeof WebhookEndpointUpdateBody>;

export const TenantBody = z.object({ tenant_id: uuid });

export const RotateSecretBody = z.object({
  ...endpointWrite,
  /** How long the previous secret keeps signing beside the new one (0: revoked at once). */
  previous_valid_seconds: z
    .number()
    .int()
    .min(0)
    .max(7 * 86_400)
    .default(86_400),
});
export type RotateSecretBody = z.infer<typeof RotateSecretBody>;

const page = {
  cursor: z.string().max(500).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
};

export const WebhookEndpointListQuery = z.object({
  tenant_id: uuid,
  project_id: scopeId.optional(),
  environment_id: scopeId.optional(),
  ...page,
});

export const WebhookAttemptListQuery = z.object({ tenant_id: uuid, ...page });
export const TenantQuery = z.object({ tenant_id: uuid });

/** An endpoint as listed: redacted (the URL's origin only, never its path, query or secrets). */
export interface WebhookEndpointView {
  id: string;
  project_id: string | null;
  environment_id: string | null;
  url_origin: string;
  event_types: WebhookEventType[];
  description: string | null;
  status: 'enabled' | 'disabled';
  disabled_reason: WebhookDisabledReason | null;
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The answer to a creation or a rotation: the `whsec_` secret, shown this once. */
export interface WebhookEndpointWithSecret {
  endpoint: WebhookEndpointView;
  secret: string;
}

/** One delivery attempt, redacted: no payload body, no secret, no URL beyond what the excerpt keeps of origins. */
export interface WebhookAttemptView {
  id: string;
  /** The `webhook-id` header: stable across the attempts of one event to one endpoint. */
  message_id: string;
  event_type: string;
  attempt: number;
  outcome: 'delivered' | 'failed';
  status_code: number | null;
  latency_ms: number;
  /** The start of the receiver's answer (at most 256 characters), URLs reduced to their origin. */
  response_excerpt: string | null;
  /** Transport failure: `timeout`, `connection_refused`, `connection_reset`, `dns`, `target_blocked`, `redirect`, `tls`, `network`. */
  error: string | null;
  created_at: string;
}

/** A message (one event for one endpoint) and where its schedule stands. */
export interface WebhookMessageView {
  id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
}

export interface CursorPage<T> {
  items: T[];
  next_cursor: string | null;
}

const endpointPath = '/internal/v1/webhook-endpoints/:endpointId';
const ep = { endpointId: uuid };

export const webhooksApi = {
  createEndpoint: endpoint<WebhookEndpointWithSecret>()({
    method: 'POST',
    callers: ['gateway'],
    route: '/internal/v1/webhook-endpoints',
    params: {},
    body: WebhookEndpointCreateBody,
  }),
  listEndpoints: endpoint<CursorPage<WebhookEndpointView>>()({
    method: 'GET',
    callers: ['gateway'],
    route: '/internal/v1/webhook-endpoints',
    params: {},
    query: WebhookEndpointListQuery,
  }),
  readEndpoint: endpoint<WebhookEndpointView>()({
    method: 'GET',
    callers: ['gateway'],
    route: endpointPath,
    params: ep,
    query: TenantQuery,
  }),
  updateEndpoint: endpoint<WebhookEndpointView>()({
    method: 'POST',
    callers: ['gateway'],
    route: endpointPath,
    params: ep,
    body: WebhookEndpointUpdateBody,
  }),
  disableEndpoint: endpoint<WebhookEndpointView>()({
    method: 'POST',
    callers: ['gateway'],
    route: `${endpointPath}/disable`,
    params: ep,
    body: EndpointWriteBody,
  }),
  /** Deletes the endpoint with its messages and attempts (answers `{deleted: true}`). */
  deleteEndpoint: endpoint<{ deleted: true }>()({
    method: 'POST',
    callers: ['gateway'],
    route: `${endpointPath}/delete`,
    params: ep,
    body: EndpointWriteBody,
  }),
  rotateSecret: endpoint<WebhookEndpointWithSecret>()({
    method: 'POST',
    callers: ['gateway'],
    route: `${endpointPath}/secret/rotate`,
    params: ep,
    body: RotateSecretBody,
  }),
  listAttempts: endpoint<CursorPage<WebhookAttemptView>>()({
    method: 'GET',
    callers: ['gateway'],
    route: `${endpointPath}/attempts`,
    params: ep,
    query: WebhookAttemptListQuery,
  }),
  /** Sends the message again now (whatever its status); its schedule starts over. */
  redeliver: endpoint<WebhookMessageView>()({
    method: 'POST',
    callers: ['gateway'],
    route: `${endpointPath}/messages/:messageId/redeliver`,
    params: { endpointId: uuid, messageId: z.string().regex(/^msg_[0-9a-f]{32}$/) },
    body: TenantBody,
  }),
} as const;

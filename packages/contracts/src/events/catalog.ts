import { z } from 'zod';
import type { Envelope } from './envelope.js';
import { BATCH_STATUSES, PROXY_NETWORK_TYPES, SETTLED_TOKEN_STATES, STAGES, TERMINAL_REQUEST_STATUSES } from '../vocabulary.js';

/**
 * The map of the fleet: every Kafka topic once, who produces it, who consumes it, its key, and the
 * event types (with their schema versions and zod schemas) it carries. Every topic has a `.dlq`
 * twin where a consumer parks a message it could not process after `retry.maxAttempts`.
 *
 * Do not rename a topic without a migration plan: names are the contract between deployed services.
 */

export type ServiceName =
  'gateway' | 'billing-ledger' | 'fetch-orchestrator' | 'browser-renderer' | 'recipe-extractor' | 'webhook-dispatcher';

export interface EventSpec {
  version: number;
  schema: z.ZodType;
  description: string;
}

export interface TopicSpec {
  name: string;
  /** What the message key is: it decides partitioning and therefore ordering. */
  key: 'request_id' | 'tenant_id';
  partitions: number;
  producers: readonly ServiceName[];
  consumers: readonly ServiceName[];
  retry: { maxAttempts: number; backoffMs: number };
  events: Record<string, EventSpec>;
}

const requestId = z.uuid();
const tokens = z.number().int().min(0);

export const FetchJobRequested = z.object({
  request_id: requestId,
});

export const RequestEventAppended = z.object({
  request_id: requestId,
  /** Per-request event sequence number; the SSE `id`. */
  event_id: z.number().int().min(1),
  kind: z.string(),
  status: z.string(),
  payload: z.record(z.string(), z.unknown()),
  created_at: z.iso.datetime({ offset: true }),
  /** The project and environment of a workflow run (absent for other requests): where webhooks scope it. */
  scope: z.object({ project_id: z.uuid(), environment_id: z.uuid() }).optional(),
});

/**
 * Every job of a batch reached a terminal state (announced once, by the transaction that ended the
 * last job; keyed by the batch id). `status` is the batch's final status.
 */
export const BatchCompleted = z.object({
  batch_id: z.uuid(),
  status: z.enum(BATCH_STATUSES),
  total_jobs: z.number().int().min(1),
  completed: z.number().int().min(0),
  failed: z.number().int().min(0),
  cancelled: z.number().int().min(0),
  finished_at: z.iso.datetime({ offset: true }),
});

export const SettlementRequested = z.object({
  request_id: requestId,
  /** `completed` posts the actual cost and releases the rest; `failed` and `cancelled` refund. */
  outcome: z.enum(TERMINAL_REQUEST_STATUSES),
  /** Route mode of the terminal stage: what the base price is taken from. */
  route_mode: z.string(),
  /** Legacy: CAPTCHA tokens priced by the sender; used only when `captcha_solves` is absent. */
  captcha_tokens: tokens,
  /** Why execution ended early. `budget_exhausted` (max_credits_per_request reached) is charged, capped at the ceiling, not refunded. */
  reason: z.enum(['budget_exhausted']).optional(),
  /** For `auto`: the stage it ended in; the base price is that stage's tariff (default `http`). */
  terminal_stage: z.enum(STAGES).optional(),
  /** CAPTCHA solves performed; the ledger prices them from its tables. */
  captcha_solves: z.number().int().min(0).optional(),
  /** Proxy traffic of the request; absent when no proxy was used. `measured` false: counted as unmeasured, never as zero bytes. */
  traffic: z
    .object({
      proxy_type: z.enum(PROXY_NETWORK_TYPES),
      measured: z.boolean(),
      request_bytes: z.number().int().min(0),
      response_bytes: z.number().int().min(0),
    })
    .optional(),
  /**
   * Version 2: the request was admitted from a credit lease (no reservation at the ledger): the
   * admission facts the ledger would otherwise have recorded. The charge is taken from the lease up
   * to `held_tokens`, the rest from the balance as a deferred charge; a refund moves nothing at
   * the ledger (the orchestrator gave the hold back to its lease). Absent: an ordinary reservation.
   */
  lease: z
    .object({
      id: z.uuid(),
      pricing_version: z.number().int().min(1),
      plan_id: z.string().min(1).max(100),
      network_class: z.enum(PROXY_NETWORK_TYPES),
      held_tokens: tokens,
    })
    .optional(),
});

export const ReservationResolved = z.object({
  request_id: requestId,
  token_state: z.enum(SETTLED_TOKEN_STATES),
  charged_tokens: tokens,
  /** The cost lines of `charged_tokens` (base of the terminal stage, CAPTCHA, proxy traffic). */
  base_tokens: tokens.optional(),
  captcha_tokens: tokens.optional(),
  traffic_tokens: tokens.optional(),
});

export const BalanceLow = z.object({
  balance_tokens: tokens,
  threshold_tokens: tokens,
});

export const BalanceExhausted = z.object({
  balance_tokens: tokens,
  /** What a refused admission needed; null when the balance simply reached zero. */
  required_tokens: tokens.nullable(),
});

export const RenderJobRequested = z.object({
  request_id: requestId,
});

/**
 * The page of a request that asked for extraction reached a terminal state. The page itself stays
 * in the orchestrator's result store (claim-check): recipe-extractor reads it by request id through
 * `orchestratorApi.requestResult`, never from Kafka.
 */
export const ExtractionJobRequested = z.object({
  request_id: requestId,
  recipe_id: z.uuid().nullable(),
  /** The version the submission pinned, when it named one (otherwise the run's reserved version). */
  version_id: z.uuid().optional(),
  /** How the page fetch ended: only `completed` has a page to extract from. */
  page_status: z.enum(TERMINAL_REQUEST_STATUSES).optional(),
});

/**
 * An active recipe version crossed the failure threshold on live pages and a repair was allowed
 * (auto-repair on, within the window or continuous repair confirmed): regenerate and verify a new
 * version on the page of `request_id` (the run that triggered it). The repair's state is
 * recipe-extractor's row `repair_id`; a redelivered message finds it ended.
 */
export const RecipeRepairRequested = z.object({
  repair_id: z.uuid(),
  recipe_id: z.uuid(),
  request_id: requestId,
});

/**
 * recipe-extractor ended the run of an extraction request (written in its outbox in the transaction
 * that ends the run, so it is published exactly when the end commits, however the process dies
 * after). fetch-orchestrator appends `extraction.completed` / `extraction.failed` to the request's
 * history once (a repeat finds it there), mirrored on request.lifecycle like every event.
 */
export const ExtractionRunEnded = z.object({
  request_id: requestId,
  status: z.enum(['completed', 'failed']),
  error: z
    .object({ code: z.string().min(1).max(100), message: z.string().max(2000) })
    .nullable()
    .default(null),
});

const defaultRetry = { maxAttempts: 5, backoffMs: 200 } as const;

export const TOPICS = {
  fetchJobs: {
    name: 'fetch.jobs',
    key: 'request_id',
    partitions: 6,
    producers: ['fetch-orchestrator'],
    consumers: ['fetch-orchestrator'],
    retry: defaultRetry,
    events: {
      'fetch.job_requested': { version: 1, schema: FetchJobRequested, description: 'An accepted request is ready to run its HTTP stage.' },
    },
  },
  requestLifecycle: {
    name: 'request.lifecycle',
    key: 'request_id',
    partitions: 6,
    producers: ['fetch-orchestrator'],
    // gateway: one consumer group per instance (every instance needs every event for its open SSE streams).
    consumers: ['webhook-dispatcher', 'gateway'],
    retry: defaultRetry,
    events: {
      'request.event_appended': {
        version: 1,
        schema: RequestEventAppended,
        description: 'A request event was appended to its history (mirrors GET .../events).',
      },
      'batch.completed': {
        version: 1,
        schema: BatchCompleted,
        description: 'Every job of a batch reached a terminal state (once per batch; keyed by the batch id).',
      },
    },
  },
  billingCommands: {
    name: 'billing.commands',
    // By tenant: one partition settles all of a tenant's requests, a fetch of them in one
    // transaction, and two of the ledger's transactions never wait on each other for the tenant's
    // account and lease rows. The ledger reads the request id from the command, not the key.
    key: 'tenant_id',
    partitions: 6,
    producers: ['fetch-orchestrator'],
    consumers: ['billing-ledger'],
    retry: defaultRetry,
    events: {
      'billing.settlement_requested': {
        // 2 added the optional `lease`; version 1 commands (without it) are still accepted.
        version: 2,
        schema: SettlementRequested,
        description: 'A request reached a terminal state; resolve its reservation exactly once.',
      },
    },
  },
  billingEvents: {
    name: 'billing.events',
    key: 'request_id',
    partitions: 6,
    producers: ['billing-ledger'],
    consumers: ['fetch-orchestrator'],
    retry: defaultRetry,
    events: {
      'billing.reservation_resolved': { version: 1, schema: ReservationResolved, description: 'A reservation was settled or refunded.' },
    },
  },
  billingAlerts: {
    // A topic of their own, apart from billing.events: the webhook dispatcher wants only these, a
    // few per tenant and day, and on billing.events it fetched (and skipped) every page's
    // reservation_resolved to find them.
    name: 'billing.alerts',
    key: 'tenant_id',
    partitions: 3,
    producers: ['billing-ledger'],
    consumers: ['webhook-dispatcher'],
    retry: defaultRetry,
    events: {
      'billing.balance_low': {
        version: 1,
        schema: BalanceLow,
        description: 'A tenant balance fell below its low-balance threshold (keyed by tenant id).',
      },
      'billing.balance_exhausted': {
        version: 1,
        schema: BalanceExhausted,
        description:
          'A tenant balance reached zero or refused an admission (keyed by tenant id); announced once until topped up past the threshold.',
      },
    },
  },
  renderJobs: {
    name: 'render.jobs',
    key: 'request_id',
    partitions: 6,
    producers: ['fetch-orchestrator'],
    consumers: ['browser-renderer'],
    retry: defaultRetry,
    events: {
      'render.job_requested': { version: 1, schema: RenderJobRequested, description: 'A request needs its browser stage.' },
    },
  },
  extractionJobs: {
    name: 'extraction.jobs',
    key: 'request_id',
    partitions: 6,
    producers: ['fetch-orchestrator', 'recipe-extractor'],
    consumers: ['recipe-extractor'],
    retry: defaultRetry,
    events: {
      'extraction.job_requested': {
        version: 1,
        schema: ExtractionJobRequested,
        description: 'The page of an extraction request reached a terminal state; run (or fail) its extraction.',
      },
      'extraction.repair_requested': {
        version: 1,
        schema: RecipeRepairRequested,
        description:
          'An active recipe version keeps failing on live pages; repair it from the failing page (recipe-extractor to itself, keyed by that request id).',
      },
    },
  },
  extractionEvents: {
    name: 'extraction.events',
    key: 'request_id',
    partitions: 6,
    producers: ['recipe-extractor'],
    consumers: ['fetch-orchestrator'],
    retry: defaultRetry,
    events: {
      'extraction.run_ended': {
        version: 1,
        schema: ExtractionRunEnded,
        description:
          "The run of an extraction request ended (written with the run's end); the request's history gets its extraction end event.",
      },
    },
  },
} as const satisfies Record<string, TopicSpec>;

export type TopicKey = keyof typeof TOPICS;

export type EventTypeOf<K extends TopicKey> = keyof (typeof TOPICS)[K]['events'] & string;

export type EventData<K extends TopicKey, E extends EventTypeOf<K>> = z.infer<
  ((typeof TOPICS)[K]['events'] & Record<E, EventSpec>)[E]['schema']
>;

/** Every event type of the catalog, across its topics. */
export type EventType = { [K in TopicKey]: EventTypeOf<K> }[TopicKey];

/** The payload of an event type as its schema parses it, whichever topic carries it. */
export type PayloadOf<E extends EventType> = {
  [K in TopicKey]: E extends EventTypeOf<K> ? EventData<K, E> : never;
}[TopicKey];

/**
 * An envelope whose payload was checked against the catalog (what a consumer hands its handlers):
 * its `type` decides its `data`, so narrowing on `type` narrows `data`.
 */
export type CatalogEnvelope<E extends EventType = EventType> = E extends EventType
  ? Omit<Envelope, 'type' | 'data'> & { type: E; data: PayloadOf<E> }
  : never;

/** Topic name as deployed: an optional environment/test prefix plus the catalog name. */
export function topicName(key: TopicKey, prefix = ''): string {
  return `${prefix}${TOPICS[key].name}`;
}

export function dlqName(key: TopicKey, prefix = ''): string {
  return `${topicName(key, prefix)}.dlq`;
}

/** Look an event type up across the catalog; undefined for unknown types. */
export function eventSpecOf(key: TopicKey, type: string): EventSpec | undefined {
  const events = TOPICS[key].events as Record<string, EventSpec>;
  return events[type];
}

export function topicsProducedBy(service: ServiceName): TopicKey[] {
  return (Object.keys(TOPICS) as TopicKey[]).filter((k) => (TOPICS[k].producers as readonly string[]).includes(service));
}

export function topicsConsumedBy(service: ServiceName): TopicKey[] {
  return (Object.keys(TOPICS) as TopicKey[]).filter((k) => (TOPICS[k].consumers as readonly string[]).includes(service));
}

import { PublicError } from '@wdr/kit/errors';
import { isUniqueViolation, type RawSql } from '@wdr/kit/db';
import { outboxJson } from '@wdr/kit/kafka';
import type { ServiceClient } from '@wdr/kit/http-client';
import {
  ledgerApi,
  type ConcurrencyCeiling,
  type Envelope,
  type ProxyNetworkTypeName,
  type RouteModeName,
  type TopicKey,
  type WorkflowOrigin,
} from '@wdr/contracts';
import { callInternal } from '@wdr/kit/internal-call';
import type { Prisma, DataRequest, PrismaClient } from '../../generated/prisma/client.js';
import type { Sealer } from '@wdr/kit/sealing';
import { admissionSnapshot, ceilingOkSql, enforceCeiling, overCeiling, snapshotSelect } from '../admission.js';
import { ADMIT_MARGIN_SQL, type CreditLeases, type LeasedQuote } from '../leases.js';
import { firstJobOf, firstStageOf } from '../stages.js';
import type { LocalClaim, LocalHttpRuns } from '../local-runs.js';
import type { ProxyPool } from '../proxies/pool.js';
import { lifecycleEnvelope } from './events.js';
import { HTTP_RUNNING } from './writes.js';
import { cachePolicyOf } from '../result-cache.js';
import { storedInputs } from './sealed-inputs.js';
import { submissionView, type SubmissionResponse } from './views.js';

export interface CreateCommand {
  request_id: string;
  tenant_id: string;
  url: string;
  route_mode: string;
  proxy_type: string | null;
  max_credits: number | null;
  options: Record<string, unknown>;
  input_hash: string;
  /** The tenant's concurrency ceiling, when the caller asks for it to be enforced. */
  concurrency?: ConcurrencyCeiling;
  /** A workflow run: its project, environment, workflow and version, and the project's budget cap. */
  origin?: WorkflowOrigin;
}

/** What admission needs: its database, the ledger to reserve with, the sealer and the URL retention. */
export interface AdmissionDeps {
  db: PrismaClient;
  /** Admission's two statements (the snapshot, the insert) on node-postgres (kit/pg-sql.ts). */
  sql: RawSql;
  ledger: ServiceClient;
  sealer: Sealer;
  /** SEAL_REQUEST_INPUTS: false writes headers, cookies and actions in clear (the first rollout from an older release only). */
  sealRequestInputs: boolean;
  targetRetentionHours: number;
  /** Premium is admitted only while a premium exit is configured. */
  pool: ProxyPool;
  /** Credit leases (LEASE_ENABLED); absent: every admission reserves with the ledger. */
  leases?: CreditLeases | undefined;
  /** HTTP stages run where admitted while a slot is free (local-runs.ts); absent: every job goes through Kafka. */
  localRuns?: LocalHttpRuns | undefined;
}

/**
 * How a stored request starts: its first job on the outbox, or (an HTTP request given a local slot)
 * claimed, its stage started here once the statement committed.
 */
type FirstStart = { job: { topic: TopicKey; key: string; envelope: Envelope } } | { claim: LocalClaim };

/**
 * A local slot for the request when its first stage is HTTP and one is free. A request that may not
 * be served from the cache (`skip_cache`, TTL 0, the bypassing options) then starts running with
 * its admission: the row is stored `running` (one attempt, started) with its `request.running`
 * event, and the stage skips its start move. One that may be served is looked up first, when the
 * stage starts, as on the queued path.
 */
function startOf(deps: AdmissionDeps, row: DataRequest): FirstStart {
  const claim = firstStageOf(row.routeMode) === 'http' ? deps.localRuns?.claim() : undefined;
  if (!claim) return { job: firstJobOf(row) };
  if (!cachePolicyOf(row.options).read) Object.assign(row, { status: 'running', attempts: 1, startedAt: row.createdAt, lastEventSeq: 2 });
  return { claim };
}

/**
 * After the statement: a claimed request's stage starts (or its slot is freed when nothing was
 * stored); an HTTP request stored with its job counts as queued.
 */
function afterInsert(deps: AdmissionDeps, start: FirstStart, row: DataRequest | undefined): void {
  if (!('claim' in start)) {
    if (row && firstStageOf(row.routeMode) === 'http') deps.localRuns?.queued();
    return;
  }
  if (row) start.claim.run(row);
  else start.claim.release();
}

/**
 * Accept a request: check the tenant's concurrency ceiling (when given), reserve the base price with
 * the ledger (idempotent per request id), then store the request, its first event and its job in one
 * statement. A create that repeats an id is a replay (same body) or an IDEMPOTENCY_CONFLICT
 * (different body), and is never refused for concurrency.
 */
export async function createRequest(
  deps: AdmissionDeps,
  cmd: CreateCommand,
  opts: { retriedFromId?: string } = {},
): Promise<SubmissionResponse> {
  const capped = cmd.origin !== undefined && cmd.origin.budget_cap_tokens !== null;
  // The common case, a request a credit lease serves (never premium or under a project's cap): the
  // replay check, the ceiling and the store in one statement; the rest reads the snapshot first.
  const quote = capped ? null : (deps.leases?.quote(cmd) ?? null);
  const leased = quote ? await admitFromLease(deps, deps.leases!, cmd, opts, quote) : undefined;
  if (leased && 'view' in leased) return leased.view;
  const seen = leased ?? (await admissionSnapshot(deps.sql, cmd.request_id, cmd.tenant_id, cmd.concurrency));
  if (seen.exists) return replayOf(await deps.db.dataRequest.findUniqueOrThrow({ where: { id: cmd.request_id } }), cmd);
  enforceCeiling(cmd.concurrency, seen.active);
  await refuseUnconnectedPremium(deps.pool, cmd.proxy_type);
  if (capped) return admitWithinProjectBudget(deps, cmd, cmd.origin!.budget_cap_tokens!, opts);
  const reservation = await reserve(deps, cmd, cmd.max_credits);
  const row = acceptedRow(deps, cmd, reservation, cmd.max_credits ?? 0, opts);
  const start = startOf(deps, row);
  let stored = false;
  try {
    await insertAccepted(deps.sql, row, start);
    stored = true;
    // The submission that stores the request reports its reservation's price as charged, even when
    // its own ledger call was the replay (a racing create of the same id reserved first and lost the insert).
    return submissionView(row, reservation.base_tokens, false);
  } catch (err) {
    if (isUniqueViolation(err)) {
      const winner = await deps.db.dataRequest.findUniqueOrThrow({ where: { id: cmd.request_id } });
      return replayOf(winner, cmd);
    }
    throw err;
  } finally {
    afterInsert(deps, start, stored ? row : undefined);
  }
}

type Reservation = Awaited<ReturnType<typeof reserve>>;

/**
 * A request a credit lease serves (`q`, its quote): the snapshot (replay, ceiling), its hold taken
 * from its slot and the request stored, in one statement, no ledger call. `view` when it was
 * stored; otherwise the snapshot, for the caller to answer the replay, refuse past the ceiling, or
 * (no room in the slot) reserve as without leases, the slot topped up meanwhile.
 */
async function admitFromLease(
  deps: AdmissionDeps,
  leases: CreditLeases,
  cmd: CreateCommand,
  opts: { retriedFromId?: string },
  q: LeasedQuote,
): Promise<{ view: SubmissionResponse } | { exists: boolean; active: number }> {
  const row = acceptedRow(
    deps,
    cmd,
    { proxy_type: q.networkClass, pricing_version: q.pricingVersion, base_tokens: q.hold, quote: null },
    cmd.max_credits ?? 0,
    opts,
  );
  row.leasePlanId = q.planId;
  const start = startOf(deps, row);
  let stored = false;
  try {
    const room = await insertLeased(deps.sql, row, start, q, cmd.concurrency);
    if (!room.stored) {
      // A replay or past the ceiling wrote nothing and is the caller's; a slot without room tops up.
      if (!room.exists && !overCeiling(cmd.concurrency, room.active)) leases.noRoom(cmd.tenant_id, q.slot, cmd.route_mode, cmd.proxy_type);
      return { exists: room.exists, active: room.active };
    }
    row.leaseId = room.leaseId;
    stored = true;
    leases.afterAdmission(cmd.tenant_id, q.slot, room, cmd.route_mode, cmd.proxy_type);
    return { view: submissionView(row, q.hold, false) };
  } catch (err) {
    if (isUniqueViolation(err))
      return { view: replayOf(await deps.db.dataRequest.findUniqueOrThrow({ where: { id: cmd.request_id } }), cmd) };
    throw err;
  } finally {
    afterInsert(deps, start, stored ? row : undefined);
  }
}

function reserve(deps: AdmissionDeps, cmd: CreateCommand, maxCredits: number | null) {
  return callInternal(deps.ledger, ledgerApi.reserve, {
    body: {
      request_id: cmd.request_id,
      tenant_id: cmd.tenant_id,
      // Parsed with the same vocabulary on the way in (orchestratorApi.createRequest).
      route_mode: cmd.route_mode as RouteModeName,
      proxy_type: cmd.proxy_type as ProxyNetworkTypeName | null,
      max_credits: maxCredits,
    },
  });
}

const budgetExhausted = (cap: number, committed: number) =>
  new PublicError(
    'PROJECT_BUDGET_EXHAUSTED',
    `The project's budget cap of ${cap} tokens leaves no room for this run (${committed} committed).`,
    {
      details: [{ field: 'budget_cap_tokens', issue: `${Math.max(0, cap - committed)} of ${cap} tokens left` }],
    },
  );

/**
 * A run of a project with a budget cap. Admissions of the project are serialised (a transaction
 * advisory lock on the project id) so two runs cannot both take the last room: the project's
 * committed tokens (ceilings of unsettled runs, charges of settled ones) leave `room`, and the run
 * is reserved with the ceiling min(its own max_credits, room): execution stops there
 * (`budget_exhausted`), so the project can never spend past its cap. No room, or less than the
 * run's base price: PROJECT_BUDGET_EXHAUSTED, nothing reserved.
 */
async function admitWithinProjectBudget(
  deps: AdmissionDeps,
  cmd: CreateCommand,
  cap: number,
  opts: { retriedFromId?: string },
): Promise<SubmissionResponse> {
  const origin = cmd.origin!;
  try {
    return await deps.db.$transaction(
      async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${origin.project_id}, 0))`;
        const [sum] = await tx.$queryRaw<
          { committed: bigint }[]
        >`SELECT coalesce(sum(budget_committed), 0)::bigint AS committed FROM data_requests WHERE project_id = ${origin.project_id}::uuid`;
        const committed = Number(sum?.committed ?? 0);
        const room = cap - committed;
        if (room <= 0) throw budgetExhausted(cap, committed);
        const ceiling = Math.min(cmd.max_credits ?? room, room);
        let reservation: Reservation;
        try {
          reservation = await reserve(deps, cmd, ceiling);
        } catch (err) {
          // The room, not the run's own max_credits, is below the base price.
          if (err instanceof PublicError && err.code === 'BUDGET_BELOW_BASE_PRICE' && ceiling < (cmd.max_credits ?? Infinity))
            throw budgetExhausted(cap, committed);
          throw err;
        }
        const row = acceptedRow(deps, cmd, reservation, ceiling, opts);
        await insertAccepted(tx, row, { job: firstJobOf(row) });
        return submissionView(row, reservation.base_tokens, false);
      },
      { timeout: 15_000, maxWait: 10_000 },
    );
  } catch (err) {
    if (isUniqueViolation(err)) return replayOf(await deps.db.dataRequest.findUniqueOrThrow({ where: { id: cmd.request_id } }), cmd);
    throw err;
  }
}

function acceptedRow(
  deps: AdmissionDeps,
  cmd: CreateCommand,
  reservation: Pick<Reservation, 'proxy_type' | 'pricing_version' | 'base_tokens' | 'quote'>,
  budgetCommitted: number,
  opts: { retriedFromId?: string },
): DataRequest {
  const target = new URL(cmd.url);
  const inputs = storedInputs(deps, cmd.request_id, cmd.options);
  return {
    id: cmd.request_id,
    tenantId: cmd.tenant_id,
    batchId: null,
    batchIndex: null,
    retriedFromId: opts.retriedFromId ?? null,
    urlOrigin: target.origin,
    targetSealed: deps.sealer.seal(cmd.url, cmd.request_id),
    targetPurgeAt: new Date(Date.now() + deps.targetRetentionHours * 3600_000),
    secretsSealed: inputs.secretsSealed,
    status: 'pending',
    routeMode: cmd.route_mode,
    proxyType: reservation.proxy_type,
    pricingVersion: reservation.pricing_version,
    baseTokens: reservation.base_tokens,
    protectedTokens: 0,
    captchaTokens: 0,
    captchaType: null,
    tokenState: 'reserved',
    cached: false,
    protected: false,
    options: {
      ...inputs.options,
      input_hash: cmd.input_hash,
      max_credits_per_request: cmd.max_credits,
      admission_quote: reservation.quote ?? null,
    } as Prisma.JsonObject,
    error: null,
    userError: null,
    resultMeta: null,
    proxyUsed: null,
    debugArtifacts: null,
    // `request.accepted` is event 1, written with the row (the general path appends it anew).
    lastEventSeq: 1,
    attempts: 0,
    createdAt: new Date(),
    startedAt: null,
    finishedAt: null,
    resultExpiresAt: null,
    trafficCarried: null,
    projectId: cmd.origin?.project_id ?? null,
    environmentId: cmd.origin?.environment_id ?? null,
    workflowId: cmd.origin?.workflow_id ?? null,
    workflowVersionId: cmd.origin?.workflow_version_id ?? null,
    budgetCommitted: cmd.origin ? budgetCommitted : 0,
    leaseId: null,
    leasePlanId: null,
    claimedUntil: null,
  };
}

/**
 * `premium` needs an available connection as well as a plan price (the ledger checks the price):
 * with no premium exit configured it is refused before anything is reserved.
 */
export async function refuseUnconnectedPremium(pool: ProxyPool, proxyType: string | null): Promise<void> {
  if (proxyType !== 'premium') return;
  await pool.ready();
  if (!pool.has('premium')) {
    throw new PublicError('VALIDATION_FAILED', 'The premium network has no available connection.', {
      details: [{ field: 'proxy_type', issue: 'premium is not available' }],
    });
  }
}

const acceptedPayload = (r: Pick<DataRequest, 'routeMode' | 'baseTokens'>) => ({ route_mode: r.routeMode, base_tokens: r.baseTokens });

/**
 * Store an accepted request, its first event (`request.accepted`, seq 1) and its outbox messages
 * (the event's mirror, then the first stage's job; a claimed request has no job, its claim's
 * deadline instead: local-runs.ts) in one statement: atomic like the transaction it
 * replaces, in one round trip and without Prisma's query engine on the hottest write of the fleet.
 * A duplicate id fails the whole statement with a unique violation (a concurrent replay).
 */
async function insertAccepted(db: RawSql, row: DataRequest, start: FirstStart): Promise<void> {
  await db.$executeRawUnsafe(
    `WITH r AS (INSERT INTO data_requests (${REQUEST_COLUMNS}) VALUES (${REQUEST_VALUES}) RETURNING id),
          e AS (${FIRST_EVENTS})
     ${FIRST_MESSAGES}`,
    ...acceptedParams(row, start),
  );
}

/**
 * insertAccepted for a request a credit lease serves, with admission's snapshot (admission.ts) in
 * the same statement: only when the id is new and the ceiling admits it does the statement take the
 * request's hold from its tenant's lease slot (only while the slot's lease admits, on the terms it
 * was priced with, and has room) and store the request from that. It answers what the slot has
 * left of what it was granted, or (nothing written) the snapshot.
 */
async function insertLeased(
  db: RawSql,
  row: DataRequest,
  start: FirstStart,
  lease: LeasedQuote,
  ceiling: ConcurrencyCeiling | undefined,
): Promise<{ stored: true; left: number; granted: number; leaseId: string } | { stored: false; exists: boolean; active: number }> {
  const rows = await db.$queryRawUnsafe<
    { exists: boolean; active: number; left: bigint | null; granted: bigint | null; lease_id: string | null }[]
  >(
    `WITH snap AS (${snapshotSelect('$1', '$2', '$31')}),
     ok AS (SELECT 1 FROM snap WHERE NOT snap.exists AND ${ceilingOkSql('snap.active', '$31', '$32')}),
     s AS (
       UPDATE tenant_leases SET held = held + $10
        WHERE tenant_id = $2::uuid AND slot = $29 AND lease_id IS NOT NULL AND policy = 'standard'
          AND plan_id = $30 AND pricing_version = $9 AND granted - held >= $10 AND admit_until > now() + ${ADMIT_MARGIN_SQL}
          AND EXISTS (SELECT 1 FROM ok)
       RETURNING lease_id, plan_id, granted - held AS left, granted
     ),
     r AS (INSERT INTO data_requests (${REQUEST_COLUMNS}, lease_id, lease_plan_id) SELECT ${REQUEST_VALUES}, s.lease_id, s.plan_id FROM s RETURNING id),
     e AS (${FIRST_EVENTS}),
     o AS (${FIRST_MESSAGES})
     SELECT snap.exists, snap.active, s.left, s.granted, s.lease_id::text FROM snap LEFT JOIN s ON true`,
    ...acceptedParams(row, start),
    lease.slot,
    lease.planId,
    ceiling ? ceiling.limit : null,
    ceiling ? ceiling.others_in_flight : 0,
  );
  const answer = rows[0]!;
  return answer.lease_id !== null
    ? { stored: true, left: Number(answer.left), granted: Number(answer.granted), leaseId: answer.lease_id }
    : { stored: false, exists: answer.exists, active: Number(answer.active) };
}

/** insertAccepted's and insertLeased's parameters $1-$28 (see the statement's parts below). */
function acceptedParams(row: DataRequest, start: FirstStart): unknown[] {
  // `request.accepted`, and `request.running` when it starts running with its admission (startOf).
  const events = [
    { kind: 'request.accepted', status: 'pending', payload: acceptedPayload(row) as Record<string, unknown> },
    ...(row.status === 'running'
      ? [{ kind: HTTP_RUNNING.kind, status: HTTP_RUNNING.status, payload: { ...HTTP_RUNNING.payload, attempt: 1 } }]
      : []),
  ];
  const messages = [
    ...events.map((e, i) => ({
      topic: 'requestLifecycle' as TopicKey,
      key: row.id,
      envelope: lifecycleEnvelope(row, { seq: i + 1, ...e, createdAt: row.createdAt }),
    })),
    ...('job' in start ? [start.job] : []),
  ];
  return [
    row.id,
    row.tenantId,
    row.retriedFromId,
    row.urlOrigin,
    row.targetSealed,
    row.targetPurgeAt,
    row.routeMode,
    row.proxyType,
    row.pricingVersion,
    row.baseTokens,
    JSON.stringify(row.options),
    row.createdAt,
    events.map((e) => JSON.stringify(e.payload)),
    messages.map((m) => m.topic),
    messages.map((m) => m.key),
    messages.map((m) => outboxJson(m.envelope)),
    row.projectId,
    row.environmentId,
    row.workflowId,
    row.workflowVersionId,
    row.budgetCommitted,
    row.secretsSealed,
    'claim' in start ? start.claim.seconds : null,
    events.map((e) => e.kind),
    events.map((e) => e.status),
    row.status,
    row.attempts,
    row.startedAt,
  ];
}

// insertAccepted's statement, in parts shared with insertLeased: the
// request row ($1-$12, $17-$23, $26-$28; $23 the claim's seconds, null when its job is queued; $26
// its status, $27 attempts and $28 start, which a request that starts running with its admission
// has), its first events ($24 kinds, $25 statuses, $13 payloads, $12 time; numbered 1, 2) and its outbox messages ($14-$16),
// each written only from the row the statement inserted (`r`).
const REQUEST_COLUMNS = `id, tenant_id, retried_from_id, url_origin, target_sealed, target_purge_at, status, route_mode, proxy_type,
  pricing_version, base_tokens, token_state, options, last_event_seq, created_at,
  project_id, environment_id, workflow_id, workflow_version_id, budget_committed, secrets_sealed, claimed_until,
  attempts, started_at`;
const REQUEST_VALUES = `$1::uuid, $2::uuid, $3::uuid, $4, $5, $6::timestamptz, $26, $7, $8, $9, $10, 'reserved', $11::jsonb, cardinality($24::text[]), $12::timestamptz,
  $17::uuid, $18::uuid, $19::uuid, $20::uuid, $21, $22, now() + make_interval(secs => $23::float8),
  $27::int, $28::timestamptz`;
const FIRST_EVENTS = `INSERT INTO request_events (request_id, seq, kind, status, payload, created_at)
  SELECT r.id, e.seq::int, e.kind, e.status, e.payload::jsonb, $12::timestamptz
    FROM r, unnest($24::text[], $25::text[], $13::text[]) WITH ORDINALITY AS e(kind, status, payload, seq)`;
const FIRST_MESSAGES = `INSERT INTO outbox_messages (topic, message_key, envelope)
  SELECT m.t, m.k, m.e::jsonb FROM r, unnest($14::text[], $15::text[], $16::text[]) WITH ORDINALITY AS m(t, k, e, n) ORDER BY m.n`;

export function replayOf(existing: DataRequest, cmd: Pick<CreateCommand, 'tenant_id' | 'input_hash'>): SubmissionResponse {
  const opts = existing.options as { input_hash?: string };
  if (existing.tenantId !== cmd.tenant_id || opts.input_hash !== cmd.input_hash) {
    throw new PublicError('IDEMPOTENCY_CONFLICT', 'This Idempotency-Key was already used with a different body.');
  }
  return submissionView(existing, 0, true);
}

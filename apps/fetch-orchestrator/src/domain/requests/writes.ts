import type { Envelope, TopicKey } from '@wdr/contracts';
import { outboxJson } from '@wdr/kit/kafka';
import type { PgSql, PgStatement } from '@wdr/kit/pg-sql';
import type { DataRequest, PrismaClient } from '../../generated/prisma/client.js';
import { announceBatchStatements } from '../batch-status.js';
import { recordTerminal } from '../request-metrics.js';
import {
  cacheFillCtes,
  cacheFillOf,
  fillResultCacheStatement,
  type CacheFill,
  type OpenedRequest,
  type ResultCacheDeps,
} from '../result-cache.js';
import { lifecycleEnvelope } from './events.js';
import { leaseGiveBack, terminalEventPayload, terminalMessages, type Termination } from './finish.js';
import { TERMINAL } from './terminal.js';

/**
 * A request's execution writes without an interactive transaction: each move of a request (its
 * stage started, handed on, finished) is one SQL statement, built here, which the caller runs
 * alone or in one transaction with the statements that go with it (the consumer's processed
 * record, the batch's end, the result cache entry: `ctx.writes`). They are PgSql statements
 * (kit/pg-sql.ts: node-postgres, prepared), not Prisma's raw queries, whose path cost several
 * times the statement's own CPU on the hottest writes of the service.
 *
 * The statement moves the row only while it is not terminal (the `UPDATE`'s condition is
 * re-checked against a concurrent cancel once its lock is granted, which is what the explicit row
 * lock did before), appends its events with numbers from the row's counter, stores the result
 * page, and writes the events' lifecycle mirrors and the other messages to the outbox, all or
 * nothing. It answers whether it moved the row (and its new status).
 */

/** One event of a move: stored in `request_events` and mirrored on `request.lifecycle`. */
export interface MoveEvent {
  kind: string;
  status: string;
  payload: Record<string, unknown>;
  /** Add `attempt` (the row's attempt counter after the move) to the payload. */
  withAttempt?: boolean;
}

/** A stage's `request.running` event, its attempt added from the row (`extra`: more of its payload). */
export function runningEvent(stage: 'http' | 'browser', extra: Record<string, unknown> = {}): MoveEvent {
  return { kind: 'request.running', status: 'running', payload: { stage, ...extra }, withAttempt: true };
}

/** The HTTP stage's `request.running` (its start move, or the admission that starts it: requests/create.ts). */
export const HTTP_RUNNING = runningEvent('http');

/** The page stored with a completing move (`request_results`, the claim-check). */
export interface MoveResult {
  statusCode: number;
  contentType: string | null;
  /** The page itself, or a staged render upload (render-uploads.ts) whose bytes the statement moves in. */
  body: Buffer | StagedPage;
  text?: string | null;
  expiresAt: Date;
}

/**
 * A page already in the staging area (`render_upload_chunks`, domain/render-uploads.ts): the
 * statement joins its chunks in Postgres and splits them into the body (its first `bodyBytes`)
 * and the text (the `textBytes` after, UTF-8), so the page never passes through this process again.
 */
export interface StagedPage {
  uploadId: string;
  bodyBytes: number;
  textBytes: number;
}

export interface Move {
  /** Column assignments, the value a parameter (`keep`: only where the column is null), or SQL without parameters (`raw`). */
  set: ({ column: string; value: unknown; cast?: string; keep?: boolean } | { raw: string })[];
  events: MoveEvent[];
  /** Messages besides the events' mirrors, to the outbox after them. */
  messages?: { topic: TopicKey; key: string; envelope: Envelope }[];
  result?: MoveResult;
  /** A leased request ending refunded: its hold back to its lease slot (requests/finish.ts leaseGiveBack), if the row moved. */
  leaseGiveBack?: { leaseId: string; tokens: number } | undefined;
  /** With `result`: the result cache entry its completion makes, in the same statement (result-cache.ts). */
  cacheFill?: CacheFill | undefined;
}

export interface MoveRow {
  moved: boolean;
  /**
   * The row's status after the move; when it did not move, the status the statement started from
   * (a cancel it waited for is not in it: read the row again for the status that stopped it).
   */
  status: string;
  attempts: number | null;
  started_at: Date | null;
  /** Result cache entries the move's `cacheFill` evicted. */
  evicted: number;
}

/** The statement of a move (lazy: run it alone by awaiting it, or in `sql.transaction([...])`). */
export function moveStatement(
  sql: PgSql,
  request: { id: string; tenantId: string; projectId?: string | null; environmentId?: string | null },
  move: Move,
) {
  const params: unknown[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const id = p(request.id);
  const terminal = p([...TERMINAL]);
  const sets = move.set.map((s) => {
    if ('raw' in s) return s.raw;
    const value = `${p(s.value)}${s.cast ? `::${s.cast}` : ''}`;
    return `${s.column} = ${s.keep ? `COALESCE(${s.column}, ${value})` : value}`;
  });
  const n = move.events.length;
  const createdAt = new Date();
  const events = move.events.map((e) => ({
    ...e,
    mirror: outboxJson(lifecycleEnvelope(request, { seq: 1, kind: e.kind, status: e.status, payload: e.payload, createdAt })),
  }));
  const messages = move.messages ?? [];
  const result = move.result;
  // prettier-ignore
  const text = `WITH u AS (
      UPDATE data_requests SET ${[...sets, `last_event_seq = last_event_seq + ${p(n)}::int`].join(', ')}
       WHERE id = ${id}::uuid AND status <> ALL(${terminal}::text[])
      RETURNING id, status, attempts, last_event_seq, started_at, cached, protected
    ), ev AS (
      SELECT u.id, (u.last_event_seq - ${p(n)}::int + e.n)::int AS seq, e.kind, e.status, e.n,
             CASE WHEN e.with_attempt THEN e.payload::jsonb || jsonb_build_object('attempt', u.attempts) ELSE e.payload::jsonb END AS payload,
             e.mirror::jsonb AS mirror
        FROM u, unnest(${p(events.map((e) => e.kind))}::text[], ${p(events.map((e) => e.status))}::text[],
                       ${p(events.map((e) => JSON.stringify(e.payload)))}::text[], ${p(events.map((e) => e.mirror))}::text[],
                       ${p(events.map((e) => e.withAttempt === true))}::boolean[])
             WITH ORDINALITY AS e(kind, status, payload, mirror, with_attempt, n)
    ), ie AS (
      INSERT INTO request_events (request_id, seq, kind, status, payload, created_at)
      SELECT id, seq, kind, status, payload, ${p(createdAt)}::timestamptz FROM ev
    )${
      result
        ? resultInsert(result, id, p)
        : ''
    }${
      result && move.cacheFill
        ? cacheFillCtes(move.cacheFill, 'u', `${p(Buffer.isBuffer(result.body) ? result.body.length : result.body.bodyBytes)}::int`, `${p(result.expiresAt)}::timestamptz`, p)
        : ''
    }${
      move.leaseGiveBack
        ? `, lg AS (
      UPDATE tenant_leases SET held = held - ${p(move.leaseGiveBack.tokens)}::bigint, updated_at = now()
       WHERE lease_id = ${p(move.leaseGiveBack.leaseId)}::uuid AND EXISTS (SELECT 1 FROM u)
    )`
        : ''
    }, o AS (
      INSERT INTO outbox_messages (topic, message_key, envelope)
      SELECT topic, message_key, envelope FROM (
        SELECT 'requestLifecycle' AS topic, ev.id::text AS message_key,
               jsonb_set(jsonb_set(ev.mirror, '{data,event_id}', to_jsonb(ev.seq)), '{data,payload}', ev.payload) AS envelope, ev.n
          FROM ev
        UNION ALL
        SELECT m.topic, m.message_key, m.envelope::jsonb, ${p(n)}::int + m.n
          FROM u, unnest(${p(messages.map((m) => m.topic))}::text[], ${p(messages.map((m) => m.key))}::text[],
                         ${p(messages.map((m) => outboxJson(m.envelope)))}::text[]) WITH ORDINALITY AS m(topic, message_key, envelope, n)
      ) x ORDER BY n
    )
    SELECT u.id IS NOT NULL AS moved, COALESCE(u.status, cur.status) AS status, u.attempts, u.started_at,
           ${result && move.cacheFill ? '(SELECT count(*) FROM evict)::int' : '0'} AS evicted
      FROM (SELECT status FROM data_requests WHERE id = ${id}::uuid) cur LEFT JOIN u ON true`;
  return sql.rows<MoveRow>(text, params);
}

/** The CTEs that store a completing move's page: given, or joined from its staged upload. */
function resultInsert(result: MoveResult, id: string, p: (v: unknown) => string): string {
  const head = `INSERT INTO request_results (request_id, status_code, content_type, body, bytes, text, expires_at)`;
  if (Buffer.isBuffer(result.body)) {
    return `, res AS (
      ${head}
      SELECT u.id, ${p(result.statusCode)}::int, ${p(result.contentType)}, ${p(result.body)}::bytea, ${p(result.body.length)}::int,
             ${p(result.text ?? null)}, ${p(result.expiresAt)}::timestamptz FROM u
      ON CONFLICT (request_id) DO NOTHING
    )`;
  }
  const staged = result.body;
  const bodyBytes = p(staged.bodyBytes);
  return `, staged AS (
      SELECT COALESCE(string_agg(c.chunk, ''::bytea ORDER BY c.seq), ''::bytea) AS bytes
        FROM render_upload_chunks c WHERE c.request_id = ${id}::uuid AND c.upload_id = ${p(staged.uploadId)}::uuid
    ), res AS (
      ${head}
      SELECT u.id, ${p(result.statusCode)}::int, ${p(result.contentType)}, substring(s.bytes FROM 1 FOR ${bodyBytes}::int), ${bodyBytes}::int,
             convert_from(substring(s.bytes FROM ${bodyBytes}::int + 1 FOR ${p(staged.textBytes)}::int), 'UTF8'),
             ${p(result.expiresAt)}::timestamptz FROM u, staged s
      ON CONFLICT (request_id) DO NOTHING
    )`;
}

/** The assignments that start a stage: running, one more attempt, started (if not already). */
export function startSet(now = new Date()): Move['set'] {
  return [
    { column: 'status', value: 'running' },
    { raw: 'attempts = attempts + 1' },
    { column: 'started_at', value: now, cast: 'timestamptz', keep: true },
  ];
}

/**
 * The move that ends a request: what `finish` writes (status, the event, the settlement command
 * through the outbox, extraction's job), as one statement. `before` are events to append ahead of
 * the terminal one (the HTTP stage's `request.protected`); `start` also counts an attempt and sets
 * `started_at` (a stage that ends as it starts).
 */
export function terminalMove(
  request: DataRequest,
  t: Termination,
  opts: { before?: MoveEvent[]; result?: MoveResult; start?: boolean } = {},
): Move {
  const now = new Date();
  const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));
  const set: Move['set'] = [
    ...(opts.start ? startSet(now).filter((s) => !('column' in s && s.column === 'status')) : []),
    { column: 'status', value: t.status },
    { column: 'finished_at', value: now, cast: 'timestamptz' },
    // A stage run where it was admitted ends its claim (domain/local-runs.ts).
    { raw: 'claimed_until = NULL' },
    { raw: `token_state = 'settlement_pending'` },
    { column: 'error', value: json(t.error), cast: 'jsonb' },
    { column: 'user_error', value: json(t.userError), cast: 'jsonb' },
    { column: 'result_meta', value: json(t.resultMeta), cast: 'jsonb' },
    { column: 'result_expires_at', value: t.resultExpiresAt ?? null, cast: 'timestamptz' },
    { column: 'proxy_used', value: t.status === 'completed' ? 'platform' : null },
    ...(t.protected ? [{ raw: 'protected = true' }] : []),
    ...(t.debugArtifacts ? [{ column: 'debug_artifacts', value: JSON.stringify(t.debugArtifacts), cast: 'jsonb' }] : []),
    ...(t.captchaSolves ? [{ raw: `captcha_type = 'captcha'` }] : []),
    ...(t.cached ? [{ raw: 'cached = true' }] : []),
  ];
  return {
    set,
    events: [
      ...(opts.before ?? []),
      {
        kind: `request.${t.status}`,
        status: t.status,
        payload: terminalEventPayload(t),
      },
    ],
    messages: terminalMessages(request, t),
    ...(opts.result ? { result: opts.result } : {}),
    ...(leaseGiveBack(request, t) ? { leaseGiveBack: leaseGiveBack(request, t)! } : {}),
  };
}

/** After a terminal move committed: count it (requests_finished_total, request_terminal_seconds) when it moved the row. */
export function countTerminal(request: DataRequest, t: Termination, row: MoveRow | undefined): void {
  if (row?.moved) recordTerminal(request, t);
}

/**
 * A terminal move with what goes with it in the same transaction: the batch's end (when the request
 * is a batch job) and, when `fillCache`, the result cache entry of a completed request (in the
 * move's own statement when the move stores the page; a request that is no batch's job then ends in
 * one statement). `done` takes the transaction's results for these statements once it committed
 * (counting the move) and answers the move's row.
 */
export function endStatements(
  deps: ResultCacheDeps,
  request: DataRequest,
  t: Termination,
  opts: {
    before?: MoveEvent[];
    result?: MoveResult;
    start?: boolean;
    fillCache?: boolean;
    /** The URL and options the stage opened, for the cache key (not opened again). */
    opened?: OpenedRequest;
  } = {},
): { statements: PgStatement<unknown>[]; done: (results: unknown[]) => MoveRow | undefined } {
  // A page below 500 makes an entry with the move that stores it; a completion without a page of
  // its own reads the stored one in a statement after the move.
  const inline =
    opts.fillCache && opts.result ? (opts.result.statusCode < 500 ? cacheFillOf(deps, request, opts.opened) : undefined) : undefined;
  const fill = opts.fillCache && !opts.result ? fillResultCacheStatement(deps, request) : undefined;
  const statements: PgStatement<unknown>[] = [
    moveStatement(deps.sql, request, { ...terminalMove(request, t, opts), cacheFill: inline }),
    ...(request.batchId ? announceBatchStatements(deps.sql, request.batchId, request.tenantId) : []),
    ...(fill ? [fill.statement] : []),
  ];
  return {
    statements,
    done: (results) => {
      const row = (results[0] as MoveRow[] | undefined)?.[0];
      countTerminal(request, t, row);
      if (inline && row) inline.counted(Number(row.evicted));
      if (fill) fill.counted(results[results.length - 1]);
      return row;
    },
  };
}

/** Run lazy statements of `sql` in one transaction; their results in order. */
export function runStatements(sql: PgSql, statements: PgStatement<unknown>[]): Promise<unknown[]> {
  return sql.transaction(statements);
}

/** The status a move that did not happen found: read after it (the statement's own answer predates a cancel it waited for). */
export async function statusAfter(db: PrismaClient, requestId: string, row: MoveRow): Promise<string> {
  if (row.moved) return row.status;
  return (await db.dataRequest.findUnique({ where: { id: requestId }, select: { status: true } }))?.status ?? row.status;
}

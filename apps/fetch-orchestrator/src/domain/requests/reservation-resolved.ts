import type { EventData } from '@wdr/contracts';
import type { RawSql } from '@wdr/kit/db';
import { outboxJson } from '@wdr/kit/kafka';
import type { Prisma } from '../../generated/prisma/client.js';
import { appendEvent, lifecycleEnvelope } from './events.js';

/**
 * Reflect the ledger's resolution of a request's reservation, in the caller's transaction: its
 * token_state, the CAPTCHA tokens charged, the base price of the stage it was settled at (`auto`
 * finished over HTTP, a cache hit: the detail's `base_tokens` becomes what was charged, no longer
 * the admission's price; a refund keeps the admission's, since nothing was charged), a workflow run's charge against its project's budget cap,
 * and a `tokens.<state>` event.
 */
export async function reflectResolvedReservation(
  tx: Prisma.TransactionClient,
  data: EventData<'billingEvents', 'billing.reservation_resolved'>,
): Promise<void> {
  // The ledger's cost lines are the truth for CAPTCHA tokens charged (debited at settlement).
  const [row] = await tx.dataRequest.updateManyAndReturn({
    where: { id: data.request_id },
    data: {
      tokenState: data.token_state,
      ...(data.captcha_tokens !== undefined ? { captchaTokens: data.captcha_tokens } : {}),
      ...(data.token_state === 'settled' && data.base_tokens !== undefined ? { baseTokens: data.base_tokens } : {}),
    },
  });
  if (!row) return; // a reservation whose request was never stored: nothing to reflect
  // A workflow run now holds what it was charged against its project's budget cap (0 when refunded).
  if (row.projectId) await tx.dataRequest.update({ where: { id: row.id }, data: { budgetCommitted: data.charged_tokens } });
  await appendEvent(tx, row, `tokens.${data.token_state}`, row.status, { charged_tokens: data.charged_tokens });
}

/** One resolution of a batch, with the request id its message carried (for the mirror's `x-request-id`). */
export interface ResolvedReservation {
  data: EventData<'billingEvents', 'billing.reservation_resolved'>;
  requestId: string | undefined;
}

/**
 * `reflectResolvedReservation` for a run of resolutions, in the caller's transaction: the same rows,
 * events and mirrors, one statement per run of distinct requests instead of a transaction per event
 * (the ledger settles in batches, so its events arrive in runs). A request named twice in a run (a
 * redelivery under a new event id) gets its second resolution in the next statement, in order, as the
 * single handler would have applied them one after the other.
 */
export async function reflectResolvedReservations(tx: RawSql, items: readonly ResolvedReservation[]): Promise<void> {
  let rest = [...items];
  while (rest.length > 0) {
    const seen = new Set<string>();
    const wave: ResolvedReservation[] = [];
    const later: ResolvedReservation[] = [];
    for (const item of rest) {
      const id = item.data.request_id.toLowerCase();
      if (seen.has(id)) later.push(item);
      else {
        seen.add(id);
        wave.push(item);
      }
    }
    await reflectWave(tx, wave);
    rest = later;
  }
}

/** One statement for resolutions of distinct requests (see reflectResolvedReservations). */
async function reflectWave(tx: RawSql, wave: readonly ResolvedReservation[]): Promise<void> {
  const createdAt = new Date();
  // The mirror as appendEvent builds it; the statement sets what only the row knows (tenant, status,
  // number, a workflow run's scope), exactly as appendEvent's statement and its caller's row did.
  const mirrors = wave.map(({ data, requestId }) =>
    outboxJson(
      lifecycleEnvelope(
        { id: data.request_id, tenantId: '00000000-0000-0000-0000-000000000000' },
        {
          seq: 1,
          kind: `tokens.${data.token_state}`,
          status: 'pending',
          payload: { charged_tokens: data.charged_tokens },
          createdAt,
        },
      ),
      requestId,
    ),
  );
  await tx.$executeRawUnsafe(
    `WITH i AS (
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $5::int[], $6::text[])
              WITH ORDINALITY AS i(request_id, token_state, charged, captcha, base, mirror, n)
     ), u AS (
       UPDATE data_requests d SET
              token_state = i.token_state,
              captcha_tokens = COALESCE(i.captcha, d.captcha_tokens),
              base_tokens = CASE WHEN i.token_state = 'settled' AND i.base IS NOT NULL THEN i.base ELSE d.base_tokens END,
              budget_committed = CASE WHEN d.project_id IS NOT NULL THEN i.charged ELSE d.budget_committed END,
              last_event_seq = d.last_event_seq + 1
         FROM i
        WHERE d.id = i.request_id
       RETURNING d.id, d.tenant_id, d.status, d.last_event_seq AS seq, d.project_id, d.environment_id, i.token_state, i.charged, i.mirror, i.n
     ), e AS (
       INSERT INTO request_events (request_id, seq, kind, status, payload, created_at)
       SELECT id, seq, 'tokens.' || token_state, status, jsonb_build_object('charged_tokens', charged), $7::timestamptz FROM u
     )
     INSERT INTO outbox_messages (topic, message_key, envelope)
     SELECT 'requestLifecycle', id::text, m.envelope
       FROM (SELECT u.id, u.n,
                    CASE WHEN u.project_id IS NULL THEN b.envelope
                         ELSE jsonb_set(b.envelope, '{data,scope}', jsonb_build_object('project_id', u.project_id, 'environment_id', u.environment_id)) END AS envelope
               FROM u,
                    LATERAL (SELECT jsonb_set(jsonb_set(jsonb_set(jsonb_set(u.mirror::jsonb,
                              '{tenant_id}', to_jsonb(u.tenant_id::text)),
                              '{data,request_id}', to_jsonb(u.id::text)),
                              '{data,status}', to_jsonb(u.status)),
                              '{data,event_id}', to_jsonb(u.seq)) AS envelope) b) m
      ORDER BY m.n`,
    wave.map((w) => w.data.request_id),
    wave.map((w) => w.data.token_state),
    wave.map((w) => w.data.charged_tokens),
    wave.map((w) => w.data.captcha_tokens ?? null),
    wave.map((w) => w.data.base_tokens ?? null),
    mirrors,
    createdAt,
  );
}

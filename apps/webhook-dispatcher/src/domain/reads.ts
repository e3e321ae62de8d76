import type { CursorPage, WebhookAttemptView, WebhookEndpointView } from '@wdr/contracts';
import type { PrismaClient } from '../generated/prisma/client.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { endpointOf, endpointView } from './endpoint-views.js';
import { webhookIdOf } from './signing.js';

/** Reads of the internal API: cursor pages `{items, next_cursor}` (keyset on created_at, id). */

/** A tenant's endpoints, oldest first; narrowed to a project (and environment) when given. */
export async function listEndpoints(
  db: PrismaClient,
  q: {
    tenant_id: string;
    project_id?: string | undefined;
    environment_id?: string | undefined;
    cursor?: string | undefined;
    limit: number;
  },
): Promise<CursorPage<WebhookEndpointView>> {
  const after = decodeCursor(q.cursor);
  const rows = await db.webhookEndpoint.findMany({
    where: {
      tenantId: q.tenant_id,
      ...(q.project_id !== undefined ? { projectId: q.project_id } : {}),
      ...(q.environment_id !== undefined ? { environmentId: q.environment_id } : {}),
      ...(after ? { OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }] } : {}),
    },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: q.limit + 1,
  });
  const items = rows.slice(0, q.limit);
  const last = items[items.length - 1];
  return { items: items.map(endpointView), next_cursor: rows.length > q.limit && last ? encodeCursor(last) : null };
}

/** An endpoint's delivery attempts, newest first, redacted (no body, no secret, no URL). */
export async function listAttempts(
  db: PrismaClient,
  endpointId: string,
  q: { tenant_id: string; cursor?: string | undefined; limit: number },
): Promise<CursorPage<WebhookAttemptView>> {
  await endpointOf(db, q.tenant_id, endpointId);
  const before = decodeCursor(q.cursor);
  const rows = await db.webhookAttempt.findMany({
    where: {
      endpointId,
      ...(before ? { OR: [{ createdAt: { lt: before.createdAt } }, { createdAt: before.createdAt, id: { lt: before.id } }] } : {}),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: q.limit + 1,
    include: { message: { select: { eventType: true } } },
  });
  const items = rows.slice(0, q.limit);
  const last = items[items.length - 1];
  return {
    items: items.map((a) => ({
      id: a.id,
      message_id: webhookIdOf(a.messageId),
      event_type: a.message.eventType,
      attempt: a.attempt,
      outcome: a.outcome as 'delivered' | 'failed',
      status_code: a.statusCode,
      latency_ms: a.latencyMs,
      response_excerpt: a.responseExcerpt,
      error: a.error,
      created_at: a.createdAt.toISOString(),
    })),
    next_cursor: rows.length > q.limit && last ? encodeCursor(last) : null,
  };
}

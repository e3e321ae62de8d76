import { z } from 'zod';
import { PublicError } from '@wdr/kit/errors';
import type { components } from '@wdr/contracts';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { detailView } from './requests/views.js';

export type RequestPage = components['schemas']['RequestPage'];

/**
 * Position after the last row of a page: its (created_at, id). Pages are keyset-paginated on that
 * pair, descending, so a row inserted while a client pages (it sorts first, being newer) never
 * shifts a later page: no duplicates and no gaps. Encoded as base64url JSON; clients treat it as
 * opaque and send it back unchanged.
 */
interface Cursor {
  createdAt: Date;
  id: string;
}

const cursorSchema = z.object({ v: z.literal(1), t: z.iso.datetime({ offset: true }), i: z.uuid() });

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify({ v: 1, t: c.createdAt.toISOString(), i: c.id })).toString('base64url');
}

export function decodeCursor(raw: string): Cursor {
  const invalid = () =>
    new PublicError('VALIDATION_FAILED', 'The request is not valid.', {
      details: [{ field: 'cursor', issue: 'is not a cursor returned by this endpoint' }],
    });
  if (!/^[A-Za-z0-9_-]{1,512}$/.test(raw)) throw invalid();
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const parsed = cursorSchema.safeParse(json);
  if (!parsed.success) throw invalid();
  return { createdAt: new Date(parsed.data.t), id: parsed.data.i };
}

export interface ListQuery {
  tenantId: string;
  limit: number;
  status?: string | undefined;
  cursor?: string | undefined;
}

/** One page of a tenant's requests, newest first. */
export async function listRequests(db: PrismaClient, q: ListQuery): Promise<RequestPage> {
  const after = q.cursor !== undefined ? decodeCursor(q.cursor) : null;
  // The row comparison walks the (tenant_id[, status], created_at DESC, id DESC) index from the
  // cursor on, whatever the page depth; one row more than asked tells whether a next page exists.
  const ids = await db.$queryRaw<{ id: string }[]>`
    SELECT id FROM data_requests
    WHERE tenant_id = ${q.tenantId}::uuid
      ${q.status !== undefined ? Prisma.sql`AND status = ${q.status}` : Prisma.empty}
      ${after ? Prisma.sql`AND (created_at, id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)` : Prisma.empty}
    ORDER BY created_at DESC, id DESC
    LIMIT ${q.limit + 1}`;
  const pageIds = ids.slice(0, q.limit).map((r) => r.id);
  const rows = await db.dataRequest.findMany({ where: { id: { in: pageIds } } });
  const byId = new Map(rows.map((r) => [r.id, r]));
  const page = pageIds.map((id) => byId.get(id)!).filter(Boolean);
  const hasMore = ids.length > q.limit && page.length > 0;
  const last = page[page.length - 1];
  return {
    data: page.map(detailView),
    meta: {
      next_cursor: hasMore && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null,
      has_more: hasMore,
      limit: q.limit,
    },
  };
}

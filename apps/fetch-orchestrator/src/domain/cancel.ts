import { transactionWithHooks } from '@wdr/kit/db';
import { PublicError } from '@wdr/kit/errors';
import type { PrismaClient } from '../generated/prisma/client.js';
import { finish } from './requests/finish.js';
import { TERMINAL } from './requests/terminal.js';
import { detailView, type RequestDetail } from './requests/views.js';

/**
 * Cancel a pending or running request of the tenant. The row is locked, so a worker finishing it at
 * the same moment either commits first (then this is a 409) or finds it terminal and stores
 * nothing; `finish` refunds the reservation through the outbox (`billing.settlement_requested`
 * with outcome `cancelled`) and appends `request.cancelled` to the history, which also announces
 * the terminal state on `request.lifecycle` to whoever tracks open requests.
 */
export async function cancelRequest(db: PrismaClient, tenantId: string, id: string): Promise<{ detail: RequestDetail; changed: boolean }> {
  return transactionWithHooks(db, async (tx) => {
    const locked = await tx.$queryRaw<
      { id: string }[]
    >`SELECT id FROM data_requests WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
    if (locked.length === 0) throw new PublicError('NOT_FOUND', 'No such request.');
    const row = await tx.dataRequest.findUniqueOrThrow({ where: { id } });
    // Cancelling twice answers the same: a client retrying a timed-out cancel must not see an error.
    if (row.status === 'cancelled') return { detail: detailView(row), changed: false };
    if (TERMINAL.has(row.status)) {
      throw new PublicError('CONFLICT', `The request is already ${row.status}; only pending or running requests can be cancelled.`);
    }
    const done = await finish(tx, row, {
      status: 'cancelled',
      error: { code: 'CANCELLED', message: 'cancelled by the tenant' },
      userError: { code: 'CANCELLED', message: 'The request was cancelled.' },
    });
    return { detail: detailView(done), changed: true };
  });
}

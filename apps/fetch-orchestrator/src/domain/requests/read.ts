import { PublicError } from '@wdr/kit/errors';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { detailView, type RequestDetail } from './views.js';

export async function readRequest(db: PrismaClient, tenantId: string, id: string): Promise<RequestDetail> {
  const r = await db.dataRequest.findUnique({ where: { id } });
  // Another tenant's request is indistinguishable from a missing one.
  if (!r || r.tenantId !== tenantId) throw new PublicError('NOT_FOUND', 'No such request.');
  return detailView(r);
}

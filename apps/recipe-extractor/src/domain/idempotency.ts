import { PublicError } from '@wdr/kit/errors';
import { isUniqueViolation } from '@wdr/kit/db';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';

type Tx = Prisma.TransactionClient;

export interface IdempotencyClaim {
  key_id: string;
  input_hash: string;
}

/**
 * A client write under an idempotency key: the write and the record of its answer commit together.
 * The same key with the same input replays the stored answer (nothing is written twice); with
 * another input it is IDEMPOTENCY_CONFLICT. Two concurrent first calls collide on the record's
 * primary key: the loser's transaction rolls back and it replays the winner.
 */
export async function idempotentWrite<T>(
  db: PrismaClient,
  tenantId: string,
  claim: IdempotencyClaim,
  write: (tx: Tx) => Promise<T>,
): Promise<T> {
  const earlier = await replayOf(db, tenantId, claim);
  if (earlier !== undefined) return earlier as T;
  try {
    return await db.$transaction(async (tx) => {
      const answer = await write(tx);
      await tx.idempotencyRecord.create({
        data: { keyId: claim.key_id, tenantId, inputHash: claim.input_hash, response: answer as Prisma.InputJsonValue },
      });
      return answer;
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      const winner = await replayOf(db, tenantId, claim);
      if (winner !== undefined) return winner as T;
    }
    throw err;
  }
}

export async function replayOf(db: PrismaClient, tenantId: string, claim: IdempotencyClaim): Promise<unknown> {
  const record = await db.idempotencyRecord.findUnique({ where: { keyId: claim.key_id } });
  if (!record) return undefined;
  if (record.tenantId !== tenantId || record.inputHash !== claim.input_hash) {
    throw new PublicError('IDEMPOTENCY_CONFLICT', 'This Idempotency-Key was already used with a different body.');
  }
  return record.response;
}

export async function purgeIdempotencyRecords(db: PrismaClient, retentionHours: number): Promise<number> {
  const { count } = await db.idempotencyRecord.deleteMany({
    where: { createdAt: { lt: new Date(Date.now() - retentionHours * 3600_000) } },
  });
  return count;
}

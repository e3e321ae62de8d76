import { randomBytes } from 'node:crypto';
import { deleteInBatches } from '@wdr/kit/db';
import { PublicError } from '@wdr/kit/errors';
import type { GatewayDeps } from '../../deps.js';
import { Prisma } from '../../generated/prisma/client.js';
import { inputHashOf, requestIdFor, validateIdempotencyKey } from '../requests/data-requests.js';

/** What a write's transaction is given: the gateway's Prisma client inside one transaction. */
export type Tx = Prisma.TransactionClient;

/**
 * Run a cabinet browser-workflow write in one transaction with its idempotency claim, like the other
 * client writes: with an `Idempotency-Key` the claim (key id derived from tenant + key, hash of the
 * operation, its path ids and its body) commits with the write, so the same write again answers the
 * stored answer without doing anything, and another write under that key is 409
 * IDEMPOTENCY_CONFLICT. A concurrent duplicate waits on the claim's primary key and then replays.
 * A write that fails leaves no claim (a retry runs it again). Without the header every call is new
 * (the server's own key is never seen again, so no claim is stored for it).
 */
export async function idempotentWrite<T>(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  idempotencyKey: string | undefined,
  operation: string,
  input: unknown,
  write: (tx: Tx) => Promise<T>,
): Promise<T> {
  validateIdempotencyKey(idempotencyKey);
  if (idempotencyKey === undefined) return deps.db.$transaction((tx) => write(tx));
  const keyId = requestIdFor(tenantId, `browser:${idempotencyKey}`);
  const inputHash = inputHashOf({ operation, input });
  return deps.db.$transaction(async (tx) => {
    const inserted = await tx.$executeRaw`
      INSERT INTO client_write_claims (key_id, tenant_id, input_hash) VALUES (${keyId}::uuid, ${tenantId}::uuid, ${inputHash})
      ON CONFLICT (key_id) DO NOTHING`;
    if (inserted === 0) {
      const claim = await tx.clientWriteClaim.findUniqueOrThrow({ where: { keyId } });
      if (claim.inputHash !== inputHash) {
        throw new PublicError('IDEMPOTENCY_CONFLICT', 'This Idempotency-Key was used with a different write.');
      }
      return (claim.response as { value: T } | null)?.value as T;
    }
    const value = await write(tx);
    await tx.clientWriteClaim.update({ where: { keyId }, data: { response: { value: (value ?? null) as Prisma.InputJsonValue } } });
    return value;
  });
}

/**
 * `idempotentWrite` for a write whose answer carries a secret shown once (an API key, a signing
 * secret): the claim stores the answer without it, so the secret is never kept in clear, and a
 * replay answers `value` alone (`secret` undefined).
 */
export async function idempotentWriteWithSecret<T>(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  idempotencyKey: string | undefined,
  operation: string,
  input: unknown,
  write: (tx: Tx) => Promise<{ value: T; secret: string }>,
): Promise<{ value: T; secret: string | undefined }> {
  let secret: string | undefined;
  const value = await idempotentWrite(deps, tenantId, idempotencyKey, operation, input, async (tx) => {
    const written = await write(tx);
    secret = written.secret;
    return written.value;
  });
  return { value, secret };
}

/**
 * Forget the write claims older than the retention (IDEMPOTENCY_RETENTION_HOURS): after that the same
 * key is a new write, as documented. Deleted oldest first, at most `batch` rows per statement (the
 * created_at index), so a large backlog never holds one long transaction. Returns the count deleted.
 */
export async function purgeWriteClaims(db: GatewayDeps['db'], retentionHours: number, batch = 5_000): Promise<number> {
  return deleteInBatches(
    (limit) => db.$executeRaw`
      DELETE FROM client_write_claims WHERE key_id IN (
        SELECT key_id FROM client_write_claims WHERE created_at < now() - make_interval(hours => ${retentionHours}::int)
        ORDER BY created_at LIMIT ${limit}::int)`,
    batch,
  );
}

/** UUID version 7 (time-ordered), so ids sort in creation order and serve as cursors. */
export function uuidv7(now = Date.now()): string {
  const b = randomBytes(16);
  b.writeUIntBE(now, 0, 6);
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id that is not a uuid cannot name anything of the tenant: 404, like a foreign one. */
export function idOrNotFound(id: string, what: string): string {
  if (!UUID_RE.test(id)) throw notFound(what);
  return id.toLowerCase();
}

export const notFound = (what: string) => new PublicError('NOT_FOUND', `No such ${what}.`);
export const conflict = (message: string) => new PublicError('CONFLICT', message);

/** Cursor pages keyed on an ordered column: the cursor is the last item's key, opaque (base64url). */
export interface PageArgs {
  cursor?: string | undefined;
  limit?: number | undefined;
}

export function pageOf(args: PageArgs): { after: string | undefined; take: number } {
  const limit = args.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new PublicError('VALIDATION_FAILED', 'The limit is not valid.', {
      details: [{ field: 'limit', issue: 'must be an integer 1..100' }],
    });
  }
  let after: string | undefined;
  if (args.cursor !== undefined && args.cursor !== '') {
    after = Buffer.from(args.cursor, 'base64url').toString('utf8');
    if (!/^[0-9a-f-]{1,64}$/.test(after)) {
      throw new PublicError('VALIDATION_FAILED', 'The cursor is not valid.', {
        details: [{ field: 'cursor', issue: 'is not a cursor of this list' }],
      });
    }
  }
  return { after, take: limit };
}

export function pageFrom<R, T>(
  rows: R[],
  take: number,
  keyOf: (r: R) => string,
  view: (r: R) => T,
): { items: T[]; next_cursor: string | null } {
  const more = rows.length > take;
  const kept = more ? rows.slice(0, take) : rows;
  return { items: kept.map(view), next_cursor: more ? Buffer.from(keyOf(kept[kept.length - 1]!), 'utf8').toString('base64url') : null };
}

export function isUniqueViolation(err: unknown): boolean {
  return err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';
}

import { createHash } from 'node:crypto';
import { deleteInBatches } from '@wdr/kit/db';
import { PublicError } from '@wdr/kit/errors';
import type { DispatcherDeps } from '../deps.js';
import type { Prisma } from '../generated/prisma/client.js';

type Deps = Pick<DispatcherDeps, 'db' | 'sealer'>;
type Tx = Prisma.TransactionClient;

/** The endpoint writes that take an operation id (a create repeats under its endpoint id instead). */
export type EndpointOperationKind = 'update' | 'disable' | 'delete' | 'rotate_secret';

export interface EndpointOperation {
  /** The caller's operation id (`operation_id`); undefined: a new write every time. */
  id: string | undefined;
  tenantId: string;
  endpointId: string;
  kind: EndpointOperationKind;
  /** The rest of the write (its body but the operation id): a repeat must carry the same. */
  input: unknown;
}

/** What a write answers: `value`, and for a rotation the new secret (kept sealed in the record). */
export interface Applied<T> {
  value: T;
  secret?: string;
}

/** Associated data of a recorded secret: it opens only as this operation's answer. */
const sealedOperationSecretAad = (operationId: string) => `endpoint-operation:${operationId}:secret`;

const conflict = () => new PublicError('IDEMPOTENCY_CONFLICT', 'This operation id was used with a different write.');

/**
 * Runs an endpoint write once per operation id. Without an id the write runs in a transaction,
 * every call anew. With one, the record (`endpoint_operations`) is claimed in the write's own
 * transaction and holds its answer once it commits, so the write and its record commit together or
 * not at all: a repeat answers the recorded answer (a rotation's secret opened again, since its
 * caller may never have received it) and changes nothing; a concurrent repeat waits on the record's
 * primary key, then answers it; another write under the id (another tenant, endpoint, kind or
 * input) is IDEMPOTENCY_CONFLICT. A write that fails records nothing (a retry runs it again).
 * `prepare` runs before the transaction and only for a write not yet applied (a URL check that
 * resolves DNS must not hold a transaction, and is not repeated for an answered operation).
 */
export async function applyOnce<T, P = undefined>(
  deps: Deps,
  op: EndpointOperation,
  write: (tx: Tx, prepared: P) => Promise<Applied<T>>,
  prepare?: () => Promise<P>,
): Promise<Applied<T>> {
  if (op.id === undefined) {
    const prepared = (prepare ? await prepare() : undefined) as P;
    return deps.db.$transaction((tx) => write(tx, prepared));
  }
  const id = op.id;
  const inputHash = createHash('sha256')
    .update(JSON.stringify({ kind: op.kind, endpoint_id: op.endpointId, input: op.input }))
    .digest('hex');
  const recorded = await deps.db.endpointOperation.findUnique({ where: { id } });
  if (recorded) return replay(deps, op, inputHash, recorded);
  const prepared = (prepare ? await prepare() : undefined) as P;
  return deps.db.$transaction(async (tx) => {
    const claimed = await tx.$executeRaw`
      INSERT INTO endpoint_operations (id, tenant_id, endpoint_id, kind, input_hash)
      VALUES (${id}::uuid, ${op.tenantId}::uuid, ${op.endpointId}::uuid, ${op.kind}, ${inputHash})
      ON CONFLICT (id) DO NOTHING`;
    if (claimed === 0) return replay(deps, op, inputHash, await tx.endpointOperation.findUniqueOrThrow({ where: { id } }));
    const applied = await write(tx, prepared);
    await tx.endpointOperation.update({
      where: { id },
      data: {
        result: applied.value as Prisma.InputJsonValue,
        secretSealed: applied.secret !== undefined ? deps.sealer.seal(applied.secret, sealedOperationSecretAad(id)) : null,
      },
    });
    return applied;
  });
}

function replay<T>(
  deps: Deps,
  op: EndpointOperation,
  inputHash: string,
  recorded: {
    id: string;
    tenantId: string;
    endpointId: string;
    kind: string;
    inputHash: string;
    result: Prisma.JsonValue;
    secretSealed: string | null;
  },
): Applied<T> {
  if (
    recorded.tenantId !== op.tenantId ||
    recorded.endpointId !== op.endpointId ||
    recorded.kind !== op.kind ||
    recorded.inputHash !== inputHash
  )
    throw conflict();
  const value = recorded.result as T;
  return recorded.secretSealed !== null
    ? { value, secret: deps.sealer.open(recorded.secretSealed, sealedOperationSecretAad(recorded.id)) }
    : { value };
}

/**
 * Forgets the operations recorded before `before` (IDEMPOTENCY_RETENTION_HOURS ago): after that the
 * same id is a new write. Oldest first, at most `batch` per statement (the created_at index), until
 * none is left. Returns how many went.
 */
export async function purgeEndpointOperations(db: Deps['db'], before: Date, batch = 5_000): Promise<number> {
  return deleteInBatches(
    (limit) => db.$executeRaw`
      DELETE FROM endpoint_operations WHERE id IN (
        SELECT id FROM endpoint_operations WHERE created_at < ${before} ORDER BY created_at LIMIT ${limit}::int)`,
    batch,
  );
}

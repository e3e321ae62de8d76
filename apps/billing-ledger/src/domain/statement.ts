import { PublicError } from '@wdr/kit/errors';
import type { PrismaClient } from '../generated/prisma/client.js';
import { tenantAccountId } from './accounts.js';

/** One line of a tenant's statement: a transfer touching its account, seen from the tenant. */
export interface StatementItem {
  transfer_id: string;
  created_at: string;
  /** `reservation`, `step_hold`, `settlement`, `refund`, `deferred_charge`, `lease_grant`, `lease_use`, `lease_return`, `top_up`, `grant`, `correction`, `recipe_generation_hold`, `recipe_generation`, `recipe_repair_hold`, `recipe_repair`. */
  type: string;
  /** `pending` (held), `post_pending` (a hold resolved with a charge), `void_pending` (a hold released), `posted`. */
  kind: string;
  /** Amount of the transfer. */
  amount_tokens: number;
  /** What it did to the available balance (negative: less to spend). */
  balance_effect_tokens: number;
  request_id: string | null;
  memo: string | null;
}

export interface StatementPage {
  items: StatementItem[];
  next_cursor: string | null;
}

interface Cursor {
  t: string;
  id: string;
}

const encode = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url');

function decode(cursor: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Cursor>;
    if (typeof c.t === 'string' && typeof c.id === 'string' && !Number.isNaN(Date.parse(c.t))) return { t: c.t, id: c.id };
  } catch {
    // fall through
  }
  throw new PublicError('VALIDATION_FAILED', 'The cursor is not valid.', {
    details: [{ field: 'cursor', issue: 'not a cursor from this API' }],
  });
}

/**
 * The itemised statement, newest first, cursor-paged on (created_at, id). Counterpart accounts are
 * not shown: the tenant sees what moved and why, not the operator's books.
 */
export async function statementOf(
  db: PrismaClient,
  tenantId: string,
  opts: { cursor?: string | undefined; limit: number },
): Promise<StatementPage> {
  const account = tenantAccountId(tenantId);
  const after = opts.cursor ? decode(opts.cursor) : null;
  const rows = await db.$queryRawUnsafe<
    {
      id: string;
      created_at: Date;
      created_key: string;
      code: string;
      kind: string;
      amount: bigint;
      request_id: string | null;
      memo: string | null;
      is_debit: boolean;
      pending_amount: bigint | null;
    }[]
  >(
    `WITH mine AS (
       (SELECT t.* FROM transfers t
         WHERE (t.debit_account_id = $1 OR t.credit_account_id = $1)
           AND ($2::timestamptz IS NULL OR (t.created_at, t.id) < ($2::timestamptz, $3::text))
         ORDER BY t.created_at DESC, t.id DESC LIMIT $4)
       UNION ALL
       -- Requests charged from the tenant's credit leases (lease -> revenue): lines of its statement too.
       (SELECT t.* FROM leases l JOIN transfers t ON t.debit_account_id = 'lease:' || l.id::text AND t.code = 'lease_use'
         WHERE l.tenant_id = $5::uuid
           AND ($2::timestamptz IS NULL OR (t.created_at, t.id) < ($2::timestamptz, $3::text))
         ORDER BY t.created_at DESC, t.id DESC LIMIT $4)
     )
     SELECT t.id, t.created_at, to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key,
            t.code, t.kind, t.amount, t.request_id::text AS request_id, t.memo,
            t.debit_account_id = $1 AS is_debit, p.amount AS pending_amount
       FROM mine t LEFT JOIN transfers p ON p.id = t.pending_id
      ORDER BY t.created_at DESC, t.id DESC
      LIMIT $4`,
    account,
    after?.t ?? null,
    after?.id ?? '',
    opts.limit + 1,
    tenantId,
  );
  const page = rows.slice(0, opts.limit);
  const items = page.map((t): StatementItem => {
    const amount = BigInt(t.amount);
    let effect: bigint;
    if (t.kind === 'post_pending') effect = BigInt(t.pending_amount ?? 0n) - amount;
    else if (t.kind === 'void_pending') effect = BigInt(t.pending_amount ?? 0n);
    // A request's charge from a lease: the grant already took it from the balance.
    else if (t.code === 'lease_use') effect = 0n;
    else effect = t.is_debit ? -amount : amount;
    return {
      transfer_id: t.id,
      created_at: t.created_at.toISOString(),
      type: t.code,
      kind: t.kind,
      amount_tokens: Number(amount),
      balance_effect_tokens: Number(effect),
      request_id: t.request_id,
      memo: t.memo,
    };
  });
  const last = page[page.length - 1];
  return { items, next_cursor: rows.length > opts.limit && last ? encode({ t: last.created_key, id: last.id }) : null };
}

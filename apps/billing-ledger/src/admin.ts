import { commandEnv, parseCommandLine, runCommand, type CommandIo } from '@wdr/kit/cli';
import { prismaClientOptions } from '@wdr/kit/db';
import { PublicError } from '@wdr/kit/errors';
import { PrismaClient } from './generated/prisma/client.js';
import { loadLedgerEnv } from './env.js';
import { balanceOf, fund } from './domain/funding.js';
import { listPlans, planOf, setPlan } from './domain/plans.js';
import { statementOf } from './domain/statement.js';

/**
 * Operator commands on the ledger's own database. Every change is a new transfer (a top-up, a
 * grant, a correction) keyed by the operator's --reference, so a repeated command is harmless;
 * nothing is edited in place. Balance events reach Kafka through the outbox of the running ledger.
 * Output is one JSON line on stdout.
 */
const usage = `usage: admin <command> [options]
  top-up    --tenant ID --amount N --reference REF [--memo TEXT]   purchased tokens
  grant     --tenant ID --amount N --reference REF [--memo TEXT]   free tokens
  correct   --tenant ID --amount=±N --reference REF --memo REASON  correcting transfer (negative debits)
  balance   --tenant ID
  statement --tenant ID [--limit N] [--cursor C]
  set-plan  --tenant ID --plan PLAN
  plan      --tenant ID
  plans`;

const options = {
  tenant: { type: 'string' },
  amount: { type: 'string' },
  reference: { type: 'string' },
  memo: { type: 'string' },
  plan: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
} as const;

const commands = ['top-up', 'grant', 'correct', 'balance', 'statement', 'set-plan', 'plan', 'plans'] as const;

class UsageError extends Error {}

function integer(name: 'amount' | 'limit', text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new UsageError(`--${name} must be a whole number`);
  return n;
}

/** One operator command: its exit code, its output written to `io`. */
export async function admin(args: string[], io: CommandIo): Promise<number> {
  const { command, values } = parseCommandLine(usage, commands, options, args, io);

  function required(name: 'tenant' | 'amount' | 'reference' | 'memo' | 'plan'): string {
    const v = values[name];
    if (!v) throw new UsageError(`--${name} is required`);
    return v;
  }

  function tenant(): string {
    const v = required('tenant');
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v)) throw new UsageError('--tenant must be a uuid');
    return v;
  }

  const env = commandEnv(() => loadLedgerEnv(io.env), io);
  const db = io.database(env.DATABASE_URL, () => new PrismaClient(prismaClientOptions(env.DATABASE_URL, { max: 2 })));

  async function run(): Promise<unknown> {
    switch (command) {
      case 'top-up':
      case 'grant':
      case 'correct': {
        const kind = command === 'top-up' ? 'top_up' : command === 'grant' ? 'grant' : 'correction';
        const memo = command === 'correct' ? required('memo') : (values.memo ?? null);
        return fund(db, kind, {
          tenant_id: tenant(),
          amount: integer('amount', required('amount')),
          reference: required('reference'),
          memo,
        });
      }
      case 'balance':
        return balanceOf(db, tenant());
      case 'statement':
        return statementOf(db, tenant(), { cursor: values.cursor, limit: values.limit ? integer('limit', values.limit) : 50 });
      case 'set-plan':
        return setPlan(db, tenant(), required('plan'));
      case 'plan':
        return planOf(db, tenant(), env.PRICING_VERSION);
      case 'plans':
        return listPlans(db);
      default:
        throw new UsageError(usage);
    }
  }

  try {
    io.out(JSON.stringify(await run()));
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(err.message);
      return 2;
    }
    io.err(err instanceof PublicError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err));
    return 1;
  }
}

await runCommand(admin);

import { ledgerApi } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import { commandEnv, EXIT_USAGE, parseCommandLine, runCommand, type CommandIo } from '@wdr/kit/cli';
import { createServiceClient } from '@wdr/kit/http-client';
import { callInternal } from '@wdr/kit/internal-call';
import { serviceIdentityFrom } from '@wdr/kit/service-identity';
import { prismaClientOptions } from '@wdr/kit/db';
import { PrismaClient } from './generated/prisma/client.js';
import { loadGatewayEnv } from './env.js';
import { issueCabinetToken, revokeCabinetToken } from './domain/auth/cabinet-tokens.js';
import {
  createTenant,
  createTenantNamed,
  issueKeyFor,
  listKeys,
  revokeKey,
  setTenantLimits,
  setTenantStatus,
} from './domain/tenants/tenants.js';

/**
 * Operator commands. `create-tenant` makes a tenant with an API key and grants it credits, and a
 * rerun of it finishes what a failed run left undone (the initial grant, idempotent by reference);
 * `issue-key` adds a key to an existing tenant; `seed-demo` does either for the tenant "demo".
 * `issue-cabinet-token` issues a client-API bearer token (shown once, stored hashed, expiring after
 * --expires-in-days, CABINET_TOKEN_TTL_DAYS by default, 0 = never); `revoke-cabinet-token` revokes
 * one by --token-id or --token. `set-limits` overrides a tenant's admission limits (`default`
 * clears an override). Output is JSON on stdout so scripts can read it.
 */
const usage = `usage: admin <command> [options]
  create-tenant --name NAME [--credits N]   once per NAME; a rerun completes the initial grant (the key is shown once)
  grant --tenant ID --amount N --reference REF   free credits, once per REF
  issue-key --tenant ID [--label LABEL] [--expires-in-days N]   no expiry unless given
  list-keys --tenant ID                     id, prefix, label, dates and state; never a secret
  revoke-key (--key-id ID | --key KEY)      refused on every replica within seconds
  suspend-tenant --tenant ID                every key and cabinet token refused (401) until resume-tenant
  resume-tenant --tenant ID
  seed-demo [--credits N]
  issue-cabinet-token --tenant ID [--label LABEL] [--expires-in-days N]
  revoke-cabinet-token (--token-id ID | --token TOKEN)
  set-limits --tenant ID [--rate N|default] [--window SECONDS|default] [--concurrency N|default]
             [--read-rate N|default] [--read-concurrency N|default]`;

const commands = [
  'create-tenant',
  'grant',
  'issue-key',
  'list-keys',
  'revoke-key',
  'suspend-tenant',
  'resume-tenant',
  'seed-demo',
  'issue-cabinet-token',
  'revoke-cabinet-token',
  'set-limits',
] as const;
const options = {
  name: { type: 'string' },
  tenant: { type: 'string' },
  credits: { type: 'string', default: '0' },
  amount: { type: 'string' },
  reference: { type: 'string' },
  label: { type: 'string' },
  'expires-in-days': { type: 'string' },
  'token-id': { type: 'string' },
  'key-id': { type: 'string' },
  key: { type: 'string' },
  token: { type: 'string' },
  rate: { type: 'string' },
  window: { type: 'string' },
  concurrency: { type: 'string' },
  'read-rate': { type: 'string' },
  'read-concurrency': { type: 'string' },
} as const;

function wholeNumber(flag: string, raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n)) throw new Error(`${flag} must be a whole number >= 0`);
  return n;
}

/** `--rate 100` sets an override, `--rate default` clears it, no flag leaves it unchanged. */
function limitOption<K extends string>(key: K, flag: string, raw: string | undefined): Partial<Record<K, number | null>> {
  if (raw === undefined) return {};
  if (raw === 'default') return { [key]: null } as Record<K, null>;
  const n = wholeNumber(flag, raw);
  if (n < 1) throw new Error(`${flag} must be >= 1 (or "default")`);
  return { [key]: n } as Record<K, number>;
}

function errorText(err: unknown): string {
  if (err instanceof Error) return 'code' in err && typeof err.code === 'string' ? `${err.code}: ${err.message}` : err.message;
  return String(err);
}

/** One operator command: its exit code, its output written to `io`. */
export async function admin(args: string[], io: CommandIo): Promise<number> {
  const { command, values } = parseCommandLine(usage, commands, options, args, io);
  const env = commandEnv(() => loadGatewayEnv(io.env), io);
  const credits = Number(values.credits);
  if (!Number.isInteger(credits) || credits < 0) {
    io.err('--credits must be a whole number >= 0');
    return EXIT_USAGE;
  }

  const db = io.database(env.DATABASE_URL, () => new PrismaClient(prismaClientOptions(env.DATABASE_URL)));
  // The admin command calls the ledger as the gateway (its own service's key).
  const ledger = createServiceClient({
    name: 'billing-ledger',
    baseUrl: env.LEDGER_URL,
    timeoutMs: 10_000,
    identity: commandEnv(() => serviceIdentityFrom('gateway', env), io).signer,
  });

  async function grant(tenantId: string, amount: number, reference: string) {
    if (amount === 0) return null;
    return callInternal(ledger, ledgerApi.grant, { params: { tenantId }, body: { amount, reference } });
  }

  let code = 0;
  try {
    switch (command) {
      case 'create-tenant': {
        if (!values.name) throw new Error('--name is required');
        // One tenant per name (an advisory lock serialises concurrent runs), then the initial grant
        // by the reference initial-grant:<tenant_id>. A rerun finds the tenant and makes the same
        // grant: the ledger answers a replay when it landed, grants it when it did not, and refuses
        // other credits under that reference (IDEMPOTENCY_CONFLICT). The key is shown only by the
        // run that created the tenant (stored hashed); a rerun points at issue-key.
        const rerun = `admin create-tenant --name ${JSON.stringify(values.name)} --credits ${credits}`;
        const t = await createTenantNamed(db, values.name, env.API_KEY_PEPPER);
        const reference = `initial-grant:${t.tenantId}`;
        let granted: Awaited<ReturnType<typeof grant>>;
        try {
          granted = await grant(t.tenantId, credits, reference);
        } catch (err) {
          if (!t.created && err instanceof PublicError && err.code === 'IDEMPOTENCY_CONFLICT') {
            io.err(
              `tenant "${values.name}" exists (tenant_id ${t.tenantId}) with an initial grant other than ${credits} credits; nothing changed (more credits: admin grant --tenant ${t.tenantId} --amount N --reference REF)`,
            );
            code = 1;
            break;
          }
          // The tenant and its key exist: print them (a new key is shown only here), then how to finish.
          io.out(
            JSON.stringify({
              tenant_id: t.tenantId,
              created: t.created,
              ...(t.created ? { api_key: t.apiKey } : {}),
              balance_tokens: null,
              grant_failed: true,
            }),
          );
          io.err(
            `granting ${credits} credits to tenant ${t.tenantId} failed: ${errorText(err)}; rerun the same command to finish it (the grant is made once): ${rerun}`,
          );
          code = 1;
          break;
        }
        // Without a grant (--credits 0): a new tenant has nothing; an existing one's balance, if the ledger answers.
        const balance =
          granted?.balance_tokens ??
          (t.created
            ? 0
            : await callInternal(ledger, ledgerApi.balance, { params: { tenantId: t.tenantId } }).then(
                (b) => b.balance_tokens,
                () => null,
              ));
        if (t.created) {
          io.out(JSON.stringify({ tenant_id: t.tenantId, created: true, api_key: t.apiKey, balance_tokens: balance }));
        } else {
          io.out(
            JSON.stringify({
              tenant_id: t.tenantId,
              created: false,
              initial_grant: credits === 0 ? 'not asked' : granted?.created ? 'granted now' : 'already granted',
              balance_tokens: balance,
            }),
          );
          io.err(
            `tenant "${values.name}" already exists (tenant_id ${t.tenantId}); its API key was shown once, when it was created. Another key: admin issue-key --tenant ${t.tenantId}`,
          );
        }
        break;
      }
      case 'grant': {
        if (!values.tenant) throw new Error('--tenant is required');
        if (!values.reference) throw new Error('--reference is required');
        const amount = wholeNumber('--amount', values.amount ?? '');
        if (amount < 1) throw new Error('--amount must be >= 1');
        const r = await callInternal(ledger, ledgerApi.grant, {
          params: { tenantId: values.tenant },
          body: { amount, reference: values.reference },
        });
        io.out(JSON.stringify({ tenant_id: values.tenant, reference: values.reference, ...r }));
        break;
      }
      case 'issue-key': {
        if (!values.tenant) throw new Error('--tenant is required');
        const days = values['expires-in-days'] === undefined ? 0 : wholeNumber('--expires-in-days', values['expires-in-days']);
        const expiresAt = days === 0 ? null : new Date(Date.now() + days * 86_400_000);
        const apiKey = await issueKeyFor(db, values.tenant, env.API_KEY_PEPPER, values.label ?? 'default', expiresAt);
        io.out(JSON.stringify({ tenant_id: values.tenant, api_key: apiKey, expires_at: expiresAt?.toISOString() ?? null }));
        break;
      }
      case 'list-keys': {
        if (!values.tenant) throw new Error('--tenant is required');
        io.out(JSON.stringify({ tenant_id: values.tenant, keys: await listKeys(db, values.tenant) }));
        break;
      }
      case 'revoke-key': {
        if (!values['key-id'] && !values.key) throw new Error('--key-id or --key is required');
        const r = await revokeKey(
          db,
          { ...(values['key-id'] ? { id: values['key-id'] } : {}), ...(values.key ? { key: values.key } : {}) },
          env.API_KEY_PEPPER,
        );
        io.out(JSON.stringify({ tenant_id: r.tenantId, key_id: r.id, revoked: true }));
        break;
      }
      case 'suspend-tenant':
      case 'resume-tenant': {
        if (!values.tenant) throw new Error('--tenant is required');
        const status = command === 'suspend-tenant' ? 'suspended' : 'active';
        await setTenantStatus(db, values.tenant, status);
        io.out(JSON.stringify({ tenant_id: values.tenant, status }));
        break;
      }
      case 'seed-demo': {
        const existing = await db.tenant.findFirst({ where: { name: 'demo' }, orderBy: { createdAt: 'asc' } });
        if (existing) {
          // Keys are stored hashed, so a re-run issues a fresh key rather than printing the old one.
          // The demo credits were granted when the tenant was created; a re-run only reads the balance.
          const apiKey = await issueKeyFor(db, existing.id, env.API_KEY_PEPPER, 'seed-demo');
          const balance = await callInternal(ledger, ledgerApi.balance, { params: { tenantId: existing.id } });
          io.out(JSON.stringify({ tenant_id: existing.id, api_key: apiKey, balance_tokens: balance.balance_tokens }));
        } else {
          const t = await createTenant(db, 'demo', env.API_KEY_PEPPER);
          const balance = await grant(t.tenantId, credits, `demo-grant:${t.tenantId}`);
          io.out(JSON.stringify({ tenant_id: t.tenantId, api_key: t.apiKey, balance_tokens: balance?.balance_tokens ?? 0 }));
        }
        break;
      }
      case 'issue-cabinet-token': {
        if (!values.tenant) throw new Error('--tenant is required');
        const days =
          values['expires-in-days'] === undefined
            ? env.CABINET_TOKEN_TTL_DAYS
            : wholeNumber('--expires-in-days', values['expires-in-days']);
        const t = await issueCabinetToken(db, values.tenant, env.API_KEY_PEPPER, {
          ...(values.label ? { label: values.label } : {}),
          expiresInDays: days === 0 ? null : days,
        });
        io.out(
          JSON.stringify({ tenant_id: t.tenantId, token_id: t.id, cabinet_token: t.token, expires_at: t.expiresAt?.toISOString() ?? null }),
        );
        break;
      }
      case 'revoke-cabinet-token': {
        if (!values['token-id'] && !values.token) throw new Error('--token-id or --token is required');
        const r = await revokeCabinetToken(
          db,
          { ...(values['token-id'] ? { id: values['token-id'] } : {}), ...(values.token ? { token: values.token } : {}) },
          env.API_KEY_PEPPER,
        );
        io.out(JSON.stringify({ tenant_id: r.tenantId, token_id: r.id, revoked: true }));
        break;
      }
      case 'set-limits': {
        if (!values.tenant) throw new Error('--tenant is required');
        const change = {
          ...limitOption('submissionsPerWindow', '--rate', values.rate),
          ...limitOption('windowSeconds', '--window', values.window),
          ...limitOption('maxConcurrentRequests', '--concurrency', values.concurrency),
          ...limitOption('readsPerWindow', '--read-rate', values['read-rate']),
          ...limitOption('maxConcurrentReads', '--read-concurrency', values['read-concurrency']),
        };
        const limits = await setTenantLimits(db, values.tenant, change);
        io.out(
          JSON.stringify({
            tenant_id: values.tenant,
            submissions_per_window: limits.submissionsPerWindow ?? null,
            window_seconds: limits.windowSeconds ?? null,
            max_concurrent_requests: limits.maxConcurrentRequests ?? null,
            reads_per_window: limits.readsPerWindow ?? null,
            max_concurrent_reads: limits.maxConcurrentReads ?? null,
          }),
        );
        break;
      }
    }
  } catch (err) {
    io.err(errorText(err));
    code = 1;
  } finally {
    ledger.breaker.shutdown(); // its rolling window's timer, in a process that runs more commands
  }
  return code;
}

await runCommand(admin);

import { parseArgs } from 'node:util';
import { createServiceClient } from '@wdr/kit/http-client';
import { prismaClientOptions } from '@wdr/kit/db';
import { PrismaClient } from './generated/prisma/client.js';
import { loadGatewayEnv } from './env.js';
import { createTenant, issueKeyFor } from './domain/tenants/tenants.js';

/**
 * Operator commands. `create-tenant` makes a tenant with an API key and grants it credits;
 * `issue-key` adds a key to an existing tenant; `seed-demo` does either for the tenant "demo".
 * Output is JSON on stdout so scripts can read it.
 */
const usage = `usage: admin <create-tenant|issue-key|seed-demo> [--name NAME] [--tenant ID] [--credits N]`;

const env = loadGatewayEnv();
const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { name: { type: 'string' }, tenant: { type: 'string' }, credits: { type: 'string', default: '0' } },
});
const command = positionals[0];
const credits = Number(values.credits);
if (!Number.isInteger(credits) || credits < 0) {
  console.error('--credits must be a whole number >= 0');
  process.exit(2);
}

const db = new PrismaClient(prismaClientOptions(env.DATABASE_URL));
const ledger = createServiceClient({ name: 'billing-ledger', baseUrl: env.LEDGER_URL, timeoutMs: 10_000 });

async function grant(tenantId: string, amount: number, reference: string) {
  if (amount === 0) return null;
  return ledger.post<{ balance_tokens: number }>(`/internal/v1/accounts/${tenantId}/grants`, { amount, reference });
}

try {
  switch (command) {
    case 'create-tenant': {
      if (!values.name) throw new Error('--name is required');
      const t = await createTenant(db, values.name, env.API_KEY_PEPPER);
      const balance = await grant(t.tenantId, credits, `initial-grant:${t.tenantId}`);
      console.log(JSON.stringify({ tenant_id: t.tenantId, api_key: t.apiKey, balance_tokens: balance?.balance_tokens ?? 0 }));
      break;
    }
    case 'issue-key': {
      if (!values.tenant) throw new Error('--tenant is required');
      console.log(JSON.stringify({ tenant_id: values.tenant, api_key: await issueKeyFor(db, values.tenant, env.API_KEY_PEPPER) }));
      break;
    }
    case 'seed-demo': {
      const existing = await db.tenant.findFirst({ where: { name: 'demo' }, orderBy: { createdAt: 'asc' } });
      if (existing) {
        // Keys are stored hashed, so a re-run issues a fresh key rather than printing the old one.
        const apiKey = await issueKeyFor(db, existing.id, env.API_KEY_PEPPER, 'seed-demo');
        const balance = await grant(existing.id, credits, `demo-grant:${existing.id}`);
        console.log(JSON.stringify({ tenant_id: existing.id, api_key: apiKey, balance_tokens: balance?.balance_tokens ?? null }));
      } else {
        const t = await createTenant(db, 'demo', env.API_KEY_PEPPER);
        const balance = await grant(t.tenantId, credits, `demo-grant:${t.tenantId}`);
        console.log(JSON.stringify({ tenant_id: t.tenantId, api_key: t.apiKey, balance_tokens: balance?.balance_tokens ?? 0 }));
      }
      break;
    }
    default:
      console.error(usage);
      process.exitCode = 2;
  }
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
} finally {
  await db.$disconnect();
}

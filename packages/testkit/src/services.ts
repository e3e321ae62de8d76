import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
/** The fleet's services, their databases and Postgres schemas: the single list tests and scripts share. */
export const SERVICES = {
  gateway: { database: 'wdr_gateway', schema: 'gateway' },
  'billing-ledger': { database: 'wdr_billing_ledger', schema: 'ledger' },
  'fetch-orchestrator': { database: 'wdr_fetch_orchestrator', schema: 'orchestrator' },
  'browser-renderer': { database: 'wdr_browser_renderer', schema: 'renderer' },
  'recipe-extractor': { database: 'wdr_recipe_extractor', schema: 'recipes' },
  'webhook-dispatcher': { database: 'wdr_webhook_dispatcher', schema: 'webhooks' },
} as const;

export type ServiceName = keyof typeof SERVICES;

export const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];

export const PG_ADMIN_URL = process.env['WDR_PG_ADMIN_URL'] ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
export const KAFKA_BROKERS = (process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092').split(',');

export function databaseUrl(database: string, schema: string): string {
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${database}`;
  u.searchParams.set('schema', schema);
  return u.toString();
}

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * The template database of a service is named after a hash of its migrations, so checkouts with
 * different migrations (another branch, a colleague's uncommitted change) never share or disturb
 * each other's templates, and a changed migration always gets a freshly migrated template.
 */
export function templateName(service: ServiceName): string {
  const dir = join(REPO, 'apps', service, 'prisma', 'migrations');
  const hash = createHash('sha256');
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else
        hash
          .update(`${relative(dir, p)}\0`)
          .update(readFileSync(p))
          .update('\0');
    }
  };
  walk(dir);
  return `wdr_tpl_${service.replace(/-/g, '_')}_${hash.digest('hex').slice(0, 10)}`;
}

/**
 * Node's arguments for a service process, as the image runs it (infra/docker/service.Dockerfile's
 * CMD and each service's `npm start` spell the same). `--max-semi-space-size=8`: V8's young
 * generation is at most 2 x 8 MB. Node 24 lets it grow to 2 x 32 MB, and a service's start-up
 * (module loading, Prisma's query compiler) grows it there and keeps it committed while idle:
 * 16-48 MB of resident memory per process that holds 2-12 MB of live young objects (measured,
 * bench/README.md 2026-11-26).
 */
export const SERVICE_NODE_ARGS: readonly string[] = ['--max-semi-space-size=8'];

/**
 * The environment a service process starts with, as the image sets it (infra/docker/service.Dockerfile,
 * `npm start` and `./dev` spell the same, services.test.ts checks it; the caller's environment wins). glibc's allocator:
 * `MALLOC_ARENA_MAX=2` keeps at most two arenas instead of eight per core, one for each thread
 * that ever allocated (libuv's pool, V8's compiler and GC threads), each holding freed memory; and
 * `MALLOC_TRIM_THRESHOLD_=1048576` gives back free memory past 1 MB at the top of an arena, where
 * glibc's own threshold rises to as much as 64 MB after a large free (the ledger kept a 14 MB
 * arena after creating 66 tenants). Together 9-14 MB less resident memory per idle service, no
 * change in the HTTP bench's CPU per page (bench/README.md 2026-11-27).
 */
export const SERVICE_PROCESS_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '1048576' };

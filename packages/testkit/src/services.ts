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

export const templateName = (service: ServiceName) => `wdr_tpl_${service.replace(/-/g, '_')}`;

import type { PrismaClient } from '../generated/prisma/client.js';

export const USAGE_WINDOW_DAYS = 30;
const PROXY_TYPES = ['datacenter', 'residential', 'premium'] as const;

export interface TrafficCounters {
  request_bytes: number;
  response_bytes: number;
  total_bytes: number;
  charged_tokens: number;
  charged_jobs: number;
  measurement_unavailable_jobs: number;
}

export interface ProxyTrafficUsage {
  period_start: string;
  period_end: string;
  period_days: number;
  proxy_traffic: TrafficCounters & { by_proxy_type: (TrafficCounters & { proxy_type: (typeof PROXY_TYPES)[number] })[] };
}

const zero = (): TrafficCounters => ({
  request_bytes: 0,
  response_bytes: 0,
  total_bytes: 0,
  charged_tokens: 0,
  charged_jobs: 0,
  measurement_unavailable_jobs: 0,
});

/**
 * Proxy traffic of the tenant's requests resolved in the last 30 days, in total and per proxy
 * type. A request whose traffic could not be measured counts in measurement_unavailable_jobs and
 * adds no bytes (it is not a zero-byte request). Only the proxy type is shown: no provider, no route.
 */
export async function usageOf(db: PrismaClient, tenantId: string, now = new Date()): Promise<ProxyTrafficUsage> {
  const start = new Date(now.getTime() - USAGE_WINDOW_DAYS * 86_400_000);
  const rows = await db.$queryRawUnsafe<
    {
      proxy_type: string;
      request_bytes: string;
      response_bytes: string;
      charged_tokens: string;
      charged_jobs: string;
      unmeasured: string;
    }[]
  >(
    `SELECT traffic_proxy_type AS proxy_type,
            COALESCE(sum(request_bytes) FILTER (WHERE traffic_measured), 0)::text AS request_bytes,
            COALESCE(sum(response_bytes) FILTER (WHERE traffic_measured), 0)::text AS response_bytes,
            COALESCE(sum(traffic_tokens), 0)::text AS charged_tokens,
            count(*) FILTER (WHERE traffic_tokens > 0)::text AS charged_jobs,
            count(*) FILTER (WHERE NOT traffic_measured)::text AS unmeasured
       FROM reservations
      WHERE tenant_id = $1::uuid AND resolved_at >= $2 AND resolved_at <= $3 AND traffic_proxy_type IS NOT NULL
      GROUP BY traffic_proxy_type`,
    tenantId,
    start,
    now,
  );
  const total = zero();
  const byType = PROXY_TYPES.map((proxy_type) => {
    const r = rows.find((x) => x.proxy_type === proxy_type);
    const c = zero();
    if (r) {
      c.request_bytes = Number(r.request_bytes);
      c.response_bytes = Number(r.response_bytes);
      c.total_bytes = c.request_bytes + c.response_bytes;
      c.charged_tokens = Number(r.charged_tokens);
      c.charged_jobs = Number(r.charged_jobs);
      c.measurement_unavailable_jobs = Number(r.unmeasured);
    }
    for (const k of Object.keys(total) as (keyof TrafficCounters)[]) total[k] += c[k];
    return { proxy_type, ...c };
  });
  return {
    period_start: start.toISOString(),
    period_end: now.toISOString(),
    period_days: USAGE_WINDOW_DAYS,
    proxy_traffic: { ...total, by_proxy_type: byType },
  };
}

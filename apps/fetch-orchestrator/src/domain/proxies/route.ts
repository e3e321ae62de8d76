import type { ProxyNetworkTypeName } from '@wdr/contracts';
import type { GeoVerifier } from './geo.js';
import { ExitFailure, type ProxyExit, type ProxyPool } from './pool.js';
import { TrafficMeter, type TrafficCount } from './traffic.js';

/**
 * How a request reaches its target, decided from what it paid for (its network class, fixed by the
 * ledger at admission) and what it asked (`proxy`, `geo_country`):
 *
 * | network class          | proxy omitted                               | `random`                   | `off`            |
 * |------------------------|---------------------------------------------|----------------------------|------------------|
 * | datacenter             | a datacenter exit if any is configured, else the platform's own (datacenter) egress | a datacenter exit | direct |
 * | residential, premium   | an exit of the class                        | an exit of the class       | refused (the class is a proxy network) |
 *
 * `geo_country` always needs an exit whose country is verified before the target is touched; with
 * `proxy: off` it is refused. A class with no usable exit fails the request (refunded) rather than
 * running it on another route at its price.
 */
export type RoutePlan =
  | { kind: 'direct' }
  | { kind: 'proxy'; networkClass: ProxyNetworkTypeName; country: string | null }
  | { kind: 'refused'; failure: RouteFailure };

export interface RouteFailure {
  code: 'PROXY_GEO_VERIFICATION_FAILED' | 'PROXY_UNAVAILABLE';
  message: string;
}

export interface RouteRequest {
  proxyType: string | null;
  options: { proxy?: unknown; geo_country?: unknown };
}

export function planRoute(pool: ProxyPool, request: RouteRequest): RoutePlan {
  const networkClass = (request.proxyType ?? 'datacenter') as ProxyNetworkTypeName;
  const setting = request.options.proxy === 'off' || request.options.proxy === 'random' ? request.options.proxy : undefined;
  const country = typeof request.options.geo_country === 'string' ? request.options.geo_country.toUpperCase() : null;
  if (setting === 'off') {
    if (country !== null) {
      return refused(
        'PROXY_GEO_VERIFICATION_FAILED',
        `geo_country ${country} needs a proxy route; with proxy off the exit country cannot be verified`,
      );
    }
    if (networkClass !== 'datacenter')
      return refused('PROXY_UNAVAILABLE', `the ${networkClass} network is a proxy network; it cannot run with proxy off`);
    return { kind: 'direct' };
  }
  if (networkClass === 'datacenter' && setting === undefined && country === null && !pool.has('datacenter')) return { kind: 'direct' };
  return { kind: 'proxy', networkClass, country };
}

const refused = (code: RouteFailure['code'], message: string): RoutePlan => ({ kind: 'refused', failure: { code, message } });

export interface RouteDeps {
  pool: ProxyPool;
  geo: GeoVerifier;
  /** Exits tried for one execution before it gives up. */
  maxExitAttempts: number;
}

export type Traffic = TrafficCount & { proxy_type: ProxyNetworkTypeName };

/** What one attempt through an exit came back with: a result, or "the exit failed, try another". */
export type AttemptResult<T> = { done: T } | { exitFailed: string };

export type RoutedResult<T> =
  | { ok: true; value: T; traffic?: Traffic; country: string | null; exit?: ProxyExit }
  | { ok: false; failure: RouteFailure; traffic?: Traffic };

/**
 * Run `attempt` on the planned route. Through a proxy: exits of the class are tried in the pool's
 * order (healthy first), each behind its breaker; with a country, the exit's country is verified
 * first (a mismatch moves on to the next exit without touching the target). An exit that fails
 * counts against its health and the next one is tried, up to maxExitAttempts. Every byte that
 * went to an exit for this execution is counted, including a failed attempt's.
 */
export async function runOnRoute<T>(
  deps: RouteDeps,
  plan: RoutePlan,
  attempt: (exit: ProxyExit | undefined) => Promise<AttemptResult<T>>,
): Promise<RoutedResult<T>> {
  if (plan.kind === 'refused') return { ok: false, failure: plan.failure };
  if (plan.kind === 'direct') {
    const r = await attempt(undefined);
    if ('done' in r) return { ok: true, value: r.done, country: null };
    return { ok: false, failure: { code: 'PROXY_UNAVAILABLE', message: r.exitFailed } };
  }
  const { networkClass, country } = plan;
  const candidates = deps.pool.candidates(networkClass, country);
  if (candidates.length === 0) {
    return {
      ok: false,
      failure:
        country === null
          ? { code: 'PROXY_UNAVAILABLE', message: `no ${networkClass} proxy exit is available` }
          : { code: 'PROXY_GEO_VERIFICATION_FAILED', message: `no ${networkClass} proxy exit is available in ${country}` },
    };
  }
  const meter = new TrafficMeter();
  const traffic = (): Traffic | undefined => (meter.connections > 0 ? { proxy_type: networkClass, ...meter.count() } : undefined);
  let geoProblem: string | undefined;
  let exitProblem: string | undefined;
  for (const exit of candidates.slice(0, deps.maxExitAttempts)) {
    try {
      const outcome = (await exit.breaker.fire(async () => {
        if (country !== null) {
          const geo = await deps.geo.countryOf(exit);
          if (!geo.ok) {
            if (geo.exitFailed) throw new ExitFailure(geo.why, exit.label);
            return { geo: geo.why };
          }
          if (geo.country !== country) return { geo: `the exit is in ${geo.country}, not ${country}` };
        }
        const r = await meter.run(() => attempt(exit));
        if ('exitFailed' in r) throw new ExitFailure(r.exitFailed, exit.label);
        return r;
      })) as { done: T } | { geo: string };
      if ('geo' in outcome) {
        deps.pool.record(networkClass, 'geo_mismatch');
        geoProblem = outcome.geo;
        continue;
      }
      deps.pool.record(networkClass, 'ok');
      return { ok: true, value: outcome.done, traffic: traffic(), country, exit };
    } catch (err) {
      if (err instanceof ExitFailure) {
        deps.pool.record(networkClass, 'exit_failed');
        exitProblem = err.message;
      } else if ((err as { code?: string }).code === 'EOPENBREAKER') {
        deps.pool.record(networkClass, 'shed');
        exitProblem = 'the proxy exit is out of rotation after repeated failures';
      } else throw err;
    }
  }
  const failure: RouteFailure =
    country !== null
      ? {
          code: 'PROXY_GEO_VERIFICATION_FAILED',
          message: `no ${networkClass} exit could be verified in ${country} (${geoProblem ?? exitProblem ?? 'unavailable'})`,
        }
      : { code: 'PROXY_UNAVAILABLE', message: `every ${networkClass} proxy exit tried failed (${exitProblem ?? 'unavailable'})` };
  return { ok: false, failure, traffic: traffic() };
}

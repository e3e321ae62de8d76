import type { RenderRoute } from '@wdr/contracts';
import type { GeoAnswer } from './geo.js';
import { ExitFailure, type ProxyExit } from './pool.js';
import { planRoute, type RouteDeps, type RouteFailure, type RouteRequest } from './route.js';

/**
 * The route of a browser stage: the same plan as the HTTP stage (domain/proxies/route.ts), but the
 * bytes flow from Chromium, so here an exit is only chosen (healthy first) and, for geo_country,
 * its country verified through it (that check is real traffic, so it runs behind the exit's
 * breaker). browser-renderer opens the exit per context and measures the traffic itself.
 */
export async function browserRouteFor(deps: RouteDeps, request: RouteRequest): Promise<{ ok: true; route: RenderRoute } | { ok: false; failure: RouteFailure }> {
  await deps.pool.ready();
  const plan = planRoute(deps.pool, request);
  if (plan.kind === 'refused') return { ok: false, failure: plan.failure };
  if (plan.kind === 'direct') return { ok: true, route: { proxy: null, country: null } };
  const { networkClass, country } = plan;
  const candidates = deps.pool.candidates(networkClass, country).slice(0, deps.maxExitAttempts);
  if (country === null) {
    const exit = candidates.find((e) => !e.breaker.opened) ?? candidates[0];
    if (exit) return { ok: true, route: routeOf(exit, null) };
    return { ok: false, failure: { code: 'PROXY_UNAVAILABLE', message: `no ${networkClass} proxy exit is available` } };
  }
  let problem = `no ${networkClass} proxy exit is available in ${country}`;
  for (const exit of candidates) {
    try {
      const geo = (await exit.breaker.fire(async () => {
        const answer = await deps.geo.countryOf(exit);
        if (!answer.ok && answer.exitFailed) throw new ExitFailure(answer.why, exit.label);
        return answer;
      })) as GeoAnswer;
      if (!geo.ok) problem = `no ${networkClass} exit could be verified in ${country} (${geo.why})`;
      else if (geo.country !== country) problem = `no ${networkClass} exit could be verified in ${country} (the exit is in ${geo.country})`;
      else return { ok: true, route: routeOf(exit, country) };
    } catch (err) {
      if (!(err instanceof ExitFailure) && (err as { code?: string }).code !== 'EOPENBREAKER') throw err;
      problem = `no ${networkClass} exit could be verified in ${country} (the exit failed)`;
    }
  }
  return { ok: false, failure: { code: 'PROXY_GEO_VERIFICATION_FAILED', message: problem } };
}

function routeOf(exit: ProxyExit, country: string | null): RenderRoute {
  const { protocol, hostname, port, username, password } = exit.url;
  return {
    proxy: {
      server: `${protocol}//${hostname}:${port}`,
      ...(username ? { username: decodeURIComponent(username) } : {}),
      ...(password ? { password: decodeURIComponent(password) } : {}),
    },
    country,
  };
}

import type { RenderRoute } from '@wdr/contracts';
import type { ProxyExit } from './pool.js';
import { planRoute, runOnRoute, type RouteDeps, type RouteFailure, type RouteRequest } from './route.js';

/**
 * The route of a browser stage: the same plan as the HTTP stage (domain/proxies/route.ts), but the
 * bytes flow from Chromium, so here an exit is only chosen (healthy first) and, for geo_country,
 * its country verified through it by `runOnRoute` (the check is real traffic, behind the exit's
 * breaker). browser-renderer opens the exit per context and measures the traffic itself.
 */
export async function browserRouteFor(
  deps: RouteDeps,
  request: RouteRequest,
): Promise<{ ok: true; route: RenderRoute } | { ok: false; failure: RouteFailure }> {
  await deps.pool.ready();
  const plan = planRoute(deps.pool, request);
  if (plan.kind === 'proxy' && plan.country === null) {
    // Nothing to verify: choosing sends no traffic, so it is not counted against or for the exit.
    const [exit] = deps.pool.candidates(plan.networkClass, null);
    if (exit) return { ok: true, route: routeOf(exit, null) };
    return { ok: false, failure: { code: 'PROXY_UNAVAILABLE', message: `no ${plan.networkClass} proxy exit is available` } };
  }
  const chosen = await runOnRoute<ProxyExit | undefined>(deps, plan, async (exit) => ({ done: exit }));
  if (!chosen.ok) return { ok: false, failure: chosen.failure };
  return { ok: true, route: chosen.value ? routeOf(chosen.value, chosen.country) : { proxy: null, country: null } };
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

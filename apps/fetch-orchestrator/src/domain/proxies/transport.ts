import { HttpProxyAgent, HttpsProxyAgent } from 'hpagent';

/**
 * got agents that tunnel through one exit (HTTP CONNECT, hpagent), for http and https targets.
 * One pair per execution and no keep-alive: each request gets its own tunnel, so its traffic is
 * its own and nothing of one tenant's connection is reused for another.
 */
export function proxyAgentsFor(proxy: URL): { http: HttpProxyAgent; https: HttpsProxyAgent } {
  const common = { proxy, keepAlive: false, maxSockets: 4 } as const;
  return { http: new HttpProxyAgent(common), https: new HttpsProxyAgent(common) };
}

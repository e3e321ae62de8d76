import { isIP } from 'node:net';
import type { TargetPolicy } from '@wdr/kit/target-policy';
import { Agent, buildConnector } from 'undici';

/**
 * The delivery client: undici's Agent, a keep-alive pool per origin (HTTP/1.1, no pipelining), at
 * most `connections` sockets to one origin (the per-endpoint bound is the claim's, in the database).
 * Its connect hook applies the target policy to every new connection: a literal address is judged
 * there, a name is resolved by the policy's lookup, which answers only allowed addresses
 * (ETARGETBLOCKED otherwise), so a name that later resolves somewhere private is refused at the
 * next connection. undici follows no redirects unless asked to (no redirect interceptor here).
 *
 * Why undici and not the kit's HTTP client or node:http: a delivery is one small POST, and in the
 * profile node's client machinery cost more CPU than the rest of the attempt.
 */
export function deliveryAgent(policy: TargetPolicy, opts: { timeoutMs: number; connections: number }): Agent {
  const connect = buildConnector({ timeout: opts.timeoutMs, lookup: policy.lookup } as buildConnector.BuildOptions);
  return new Agent({
    connections: opts.connections,
    pipelining: 1,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    connect: (options, callback) => {
      const host = options.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) !== 0 && !policy.addressAllowed(host)) {
        const err: NodeJS.ErrnoException = new Error('the target address is not allowed');
        err.code = 'ETARGETBLOCKED';
        return callback(err, null);
      }
      connect(options, callback);
    },
  });
}

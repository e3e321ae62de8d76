import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  RequestError,
  Server,
  type ConnectionStats,
  type PrepareRequestFunctionOpts,
  type PrepareRequestFunctionResult,
} from 'proxy-chain';
import type { RenderRoute, RenderTraffic } from '@wdr/contracts';
import type { Logger } from '@wdr/kit/log';
import type { TargetPolicy } from '@wdr/kit/target-policy';

type UpstreamProxy = NonNullable<RenderRoute['proxy']>;

/** What a browser context is given instead of the upstream proxy: the local server and this render's token. */
export interface MeteredRoute {
  /** `http://127.0.0.1:<port>`: the context's proxyServer. */
  proxyServer: string;
  /** The per-render token the context authenticates with (`page.authenticate`). */
  username: string;
  password: string;
  /** Bytes between the local server and the upstream so far (open and closed connections). */
  soFar(): RenderTraffic;
  /**
   * The render is over (its context closed): wait briefly for its connections to close, then the
   * final count. The token stops working at once.
   */
  settle(): Promise<RenderTraffic>;
}

interface Session {
  username: string;
  password: Buffer;
  upstreamUrl: string;
  /** Connections (proxy-chain ids) this render's requests went upstream on. */
  open: Set<number>;
  /** Counts of those that closed, taken from the `connectionClosed` event. */
  closed: ConnectionStats[];
  /** A count that cannot be trusted was seen (a connection shared with another render). */
  untrusted: boolean;
  /** Agents of this render alone: no upstream connection is shared with another render or outlives this one. */
  httpAgent: http.Agent;
  httpsAgent: https.Agent;
  ended: boolean;
}

/** How long `settle` waits for a closed context's connections to close before reading them open. */
const SETTLE_WAIT_MS = 1_000;

/**
 * The one place where the browser stage's proxy traffic is counted: a local proxy-chain server on
 * 127.0.0.1 that every proxied context goes through. Each render gets a token (username and
 * password of its own); the server maps the token to that render's upstream proxy (credentials
 * included, never logged) and records which connections carried it. The bytes counted are those
 * between this server and the upstream (proxy-chain's trgTxBytes / trgRxBytes): what really
 * crosses the proxy network, TLS and tunnel overhead included.
 */
export class ProxyMeter {
  private readonly server: Server;
  private readonly sessions = new Map<string, Session>();
  private readonly owner = new Map<number, Session>();
  private started = false;

  constructor(private readonly opts: { policy: TargetPolicy; log: Logger }) {
    this.server = new Server({
      port: 0,
      host: '127.0.0.1',
      verbose: false,
      prepareRequestFunction: (o) => this.prepare(o),
    });
    this.server.on('connectionClosed', ({ connectionId, stats }: { connectionId: number; stats: ConnectionStats | undefined }) => {
      const session = this.owner.get(connectionId);
      if (!session) return;
      this.owner.delete(connectionId);
      session.open.delete(connectionId);
      if (!stats || stats.trgTxBytes === null || stats.trgRxBytes === null) session.untrusted = true;
      else session.closed.push(stats);
    });
    // Failures of single requests (an upstream that refuses, a reset) are the page's to see; they
    // are logged without the request, whose URL and headers are the tenant's.
    this.server.on('requestFailed', ({ error }: { error: Error }) =>
      this.opts.log.debug({ err: { message: error.message } }, 'proxied request failed'),
    );
  }

  async start(): Promise<void> {
    if (this.started) return;
    await this.server.listen();
    this.started = true;
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.server.close(true);
  }

  /** Port of the local server (tests and diagnostics). */
  get port(): number {
    return this.server.port;
  }

  /** A token for one render whose traffic goes to `upstream`. */
  open(upstream: UpstreamProxy): MeteredRoute {
    if (!this.started) throw new Error('the proxy meter is not started');
    const url = new URL(upstream.server);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('the upstream proxy must be an http(s) CONNECT proxy');
    if (upstream.username !== undefined) url.username = upstream.username;
    if (upstream.password !== undefined) url.password = upstream.password;
    const username = `r${randomBytes(12).toString('hex')}`;
    const password = randomBytes(24).toString('hex');
    const session: Session = {
      username,
      password: Buffer.from(password),
      upstreamUrl: url.toString(),
      open: new Set(),
      closed: [],
      untrusted: false,
      httpAgent: new http.Agent({ keepAlive: true }),
      httpsAgent: new https.Agent({ keepAlive: true }),
      ended: false,
    };
    this.sessions.set(username, session);
    return {
      proxyServer: `http://127.0.0.1:${this.server.port}`,
      username,
      password,
      soFar: () => this.count(session),
      settle: async () => {
        session.ended = true;
        this.sessions.delete(username);
        const deadline = Date.now() + SETTLE_WAIT_MS;
        while (session.open.size > 0 && Date.now() < deadline) await sleep(25);
        const traffic = this.count(session);
        for (const id of session.open) this.owner.delete(id);
        session.httpAgent.destroy();
        session.httpsAgent.destroy();
        return traffic;
      },
    };
  }

  private count(session: Session): RenderTraffic {
    let sent = 0;
    let received = 0;
    let measured = !session.untrusted;
    for (const s of session.closed) {
      sent += s.trgTxBytes ?? 0;
      received += s.trgRxBytes ?? 0;
    }
    for (const id of session.open) {
      const s = this.server.getConnectionStats(id);
      if (!s || s.trgTxBytes === null || s.trgRxBytes === null) {
        measured = false;
        continue;
      }
      sent += s.trgTxBytes;
      received += s.trgRxBytes;
    }
    return { measured, request_bytes: sent, response_bytes: received };
  }

  private prepare(o: PrepareRequestFunctionOpts): PrepareRequestFunctionResult {
    const session = o.username ? this.sessions.get(o.username) : undefined;
    const given = Buffer.from(o.password ?? '');
    if (!session || session.ended || given.length !== session.password.length || !timingSafeEqual(given, session.password)) {
      return { requestAuthentication: true };
    }
    // The page's requests are checked before they leave the page; this catches what the page does
    // not see (literal private addresses and localhost names asked of the proxy by anything else).
    const host = o.hostname.includes(':') ? `[${o.hostname}]` : o.hostname;
    if (this.opts.policy.checkUrl(new URL(`http://${host}:${o.port}/`))) throw new RequestError('the target address is not allowed', 403);
    const current = this.owner.get(o.connectionId);
    if (current && current !== session) {
      // One client connection carrying two renders' requests: neither count can be trusted.
      current.untrusted = true;
      session.untrusted = true;
    }
    this.owner.set(o.connectionId, session);
    session.open.add(o.connectionId);
    return { upstreamProxyUrl: session.upstreamUrl, httpAgent: session.httpAgent, httpsAgent: session.httpsAgent };
  }
}

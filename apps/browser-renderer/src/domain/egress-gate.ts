import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
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
import { refusedThroughExit, type TargetDecision, type TargetPolicy } from '@wdr/kit/target-policy';

type UpstreamProxy = NonNullable<RenderRoute['proxy']>;

/** Why the gate refused a host for a render. */
export type Refusal = 'blocked' | 'unresolvable';

/** What a browser context is given: the local gate and this render's token. */
export interface GateRoute {
  /** `http://127.0.0.1:<port>`: the context's proxyServer. */
  proxyServer: string;
  /** The per-render token the context authenticates with (`page.authenticate`). */
  username: string;
  password: string;
  /** Bytes between the gate and the upstream proxy so far (proxied routes; open and closed connections). */
  soFar(): RenderTraffic;
  /** Connections and requests of this render the gate refused (each CONNECT or plain request). */
  refused(): number;
  /** Whether (and why) the gate refused this host and port for this render. */
  refusalOf(host: string, port: number): Refusal | undefined;
  /**
   * The render is over (its context closed): wait briefly for its connections to close, then the
   * final count. The token stops working at once.
   */
  settle(): Promise<RenderTraffic>;
}

interface Session {
  username: string;
  password: Buffer;
  policy: TargetPolicy;
  /** The proxy exit of a proxied route (credentials included); absent: the gate connects itself. */
  upstreamUrl: string | undefined;
  /** One decision per host for the whole render: a name is resolved once, whatever it answers later. */
  decisions: Map<string, Promise<TargetDecision>>;
  refusals: Map<string, Refusal>;
  refusedCount: number;
  /** Connections (proxy-chain ids) this render's requests went out on. */
  open: Set<number>;
  /** Counts of those that closed, taken from the `connectionClosed` event. */
  closed: ConnectionStats[];
  /** A count that cannot be trusted was seen (a connection shared with another render). */
  untrusted: boolean;
  /** Agents of this render alone: no outgoing connection is shared with another render or outlives this one. */
  httpAgent: http.Agent;
  httpsAgent: https.Agent;
  ended: boolean;
}

/** How long `settle` waits for a closed context's connections to close before reading them open. */
const SETTLE_WAIT_MS = 1_000;

const hostKey = (host: string, port: number) => `${host.replace(/^\[|\]$/g, '').toLowerCase()}:${port}`;

/**
 * A dns.lookup for one connection that answers only the addresses the gate checked: the socket
 * connects to what was decided, and nothing resolves the name a second time.
 */
export function pinnedLookup(addresses: LookupAddress[]): NonNullable<PrepareRequestFunctionResult['dnsLookup']> {
  return ((_hostname: string, options: unknown, callback: unknown) => {
    const cb = (typeof options === 'function' ? options : callback) as (
      err: NodeJS.ErrnoException | null,
      address?: string | LookupAddress[],
      family?: number,
    ) => void;
    const o = (typeof options === 'object' && options !== null ? options : { family: options }) as { family?: unknown; all?: boolean };
    const family = o.family === 4 || o.family === 'IPv4' ? 4 : o.family === 6 || o.family === 'IPv6' ? 6 : 0;
    const list = family ? addresses.filter((a) => a.family === family) : addresses;
    if (list.length === 0) {
      const e: NodeJS.ErrnoException = new Error('no checked address of that family');
      e.code = 'ENOTFOUND';
      return cb(e);
    }
    if (o.all) return cb(null, list);
    cb(null, list[0]!.address, list[0]!.family);
  }) as NonNullable<PrepareRequestFunctionResult['dnsLookup']>;
}

/**
 * The one way out for everything a render does: a local proxy-chain server on 127.0.0.1 that every
 * browser context (direct and proxied routes) and the browser itself use as their proxy, loopback
 * included. Chromium resolves no target name: it asks the gate to CONNECT (https, wss, any tunnel)
 * or to forward (plain http, ws upgrade), so documents, sub-resources, iframes, fetch/XHR,
 * WebSockets and every kind of worker pass here, whether or not request interception sees them.
 *
 * Each render gets a token (username and password of its own) and a target policy. For a direct
 * route the gate resolves each name once per render with the policy's resolver, keeps only the
 * addresses the policy allows and connects to one of those (the socket's lookup answers them; no
 * second resolution); a name that does not resolve, or resolves only to refused addresses, is
 * refused (403) and counted. For a proxied route the exit resolves the name: the gate refuses
 * literal internal addresses and names with any internal address here, and passes the rest
 * to the exit (a name that does not resolve here is the exit's to resolve). A connection without a
 * live token gets 407 and goes nowhere.
 *
 * For proxied routes it is also where traffic is counted: the bytes between this server and the
 * upstream (proxy-chain's trgTxBytes / trgRxBytes), TLS and tunnel overhead included.
 */
export class EgressGate {
  private readonly server: Server;
  private readonly sessions = new Map<string, Session>();
  private readonly owner = new Map<number, Session>();
  private started = false;

  constructor(private readonly opts: { log: Logger }) {
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
      this.opts.log.debug({ err: { message: error.message } }, 'request through the egress gate failed'),
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

  /** Port of the local server: Chromium's --proxy-server. */
  get port(): number {
    return this.server.port;
  }

  /** `http://127.0.0.1:<port>`. */
  get proxyServer(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  /** A token for one render: its connections are judged by `policy` and leave directly, or through `upstream`. */
  open(opts: { policy: TargetPolicy; upstream?: UpstreamProxy | null | undefined }): GateRoute {
    if (!this.started) throw new Error('the egress gate is not started');
    let upstreamUrl: string | undefined;
    if (opts.upstream) {
      const url = new URL(opts.upstream.server);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('the upstream proxy must be an http(s) CONNECT proxy');
      if (opts.upstream.username !== undefined) url.username = opts.upstream.username;
      if (opts.upstream.password !== undefined) url.password = opts.upstream.password;
      upstreamUrl = url.toString();
    }
    const username = `r${randomBytes(12).toString('hex')}`;
    const password = randomBytes(24).toString('hex');
    const session: Session = {
      username,
      password: Buffer.from(password),
      policy: opts.policy,
      upstreamUrl,
      decisions: new Map(),
      refusals: new Map(),
      refusedCount: 0,
      open: new Set(),
      closed: [],
      untrusted: false,
      httpAgent: new http.Agent({ keepAlive: true }),
      httpsAgent: new https.Agent({ keepAlive: true }),
      ended: false,
    };
    this.sessions.set(username, session);
    return {
      proxyServer: this.proxyServer,
      username,
      password,
      soFar: () => this.count(session),
      refused: () => session.refusedCount,
      refusalOf: (host, port) => session.refusals.get(hostKey(host, port)),
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

  private refuse(session: Session, host: string, port: number, why: Refusal): never {
    session.refusedCount++;
    session.refusals.set(hostKey(host, port), why);
    // The host is the tenant's (or the page's): not logged.
    this.opts.log.debug({ reason: why }, 'egress refused');
    throw new RequestError(why === 'blocked' ? 'the target address is not allowed' : 'the target name did not resolve', 403);
  }

  private async prepare(o: PrepareRequestFunctionOpts): Promise<PrepareRequestFunctionResult> {
    const session = o.username ? this.sessions.get(o.username) : undefined;
    const given = Buffer.from(o.password ?? '');
    if (!session || session.ended || given.length !== session.password.length || !timingSafeEqual(given, session.password)) {
      return { requestAuthentication: true };
    }
    const host = o.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    const port = Number(o.port);
    // Scheme-independent URL checks first: literal addresses and localhost names, no DNS.
    if (session.policy.checkUrl(new URL(`http://${host.includes(':') ? `[${host}]` : host}:${port}/`))) {
      this.refuse(session, host, port, 'blocked');
    }
    let decided = session.decisions.get(host);
    if (!decided) {
      decided = session.policy.decide(host);
      session.decisions.set(host, decided);
    }
    const decision = await decided;
    if (session.ended) return { requestAuthentication: true };
    let pinned: PrepareRequestFunctionResult['dnsLookup'];
    if (session.upstreamUrl) {
      // The exit resolves the name: refuse what has any internal address here (the exit could pick
      // it); a name that does not resolve here goes to the exit, which resolves it in its own network.
      if (refusedThroughExit(decision)) this.refuse(session, host, port, 'blocked');
    } else {
      if (decision.verdict === 'refused') this.refuse(session, host, port, decision.reason);
      pinned = pinnedLookup(decision.addresses);
    }
    const current = this.owner.get(o.connectionId);
    if (current && current !== session) {
      // One client connection carrying two renders' requests: neither count can be trusted.
      current.untrusted = true;
      session.untrusted = true;
    }
    this.owner.set(o.connectionId, session);
    session.open.add(o.connectionId);
    return {
      ...(session.upstreamUrl ? { upstreamProxyUrl: session.upstreamUrl } : { dnsLookup: pinned }),
      httpAgent: session.httpAgent,
      httpsAgent: session.httpsAgent,
    };
  }
}

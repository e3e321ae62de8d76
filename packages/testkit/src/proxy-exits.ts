import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server as ProxyServer } from 'proxy-chain';

/**
 * A real upstream proxy (proxy-chain) playing one exit of a proxy network, on its own loopback
 * address (127.0.0.2, 127.0.0.3, ...) so tests can tell exits apart: it asks for credentials,
 * opens its onward connections from that same address (so a target or the IP echo sees which
 * exit a request left through), and counts, independently of the platform, the bytes exchanged
 * with its clients.
 */
export interface ProxyExitServer {
  /** `http://user:pass@host:port`, what the operator configures. */
  url: string;
  host: string;
  port: number;
  /** Tunnels and forwarded requests accepted (authenticated). */
  requests: () => number;
  /** Hosts (host:port) the exit was asked to reach, in order. */
  targets: string[];
  /** Bytes received from clients and sent to them, over closed and open connections. */
  bytes: () => { fromClients: number; toClients: number };
  /** Stop accepting and drop every connection (the exit dies). */
  close: () => Promise<void>;
}

export async function startProxyExit(opts: { host: string; username?: string; password?: string }): Promise<ProxyExitServer> {
  const username = opts.username ?? 'exit-user';
  const password = opts.password ?? 'exit-pass';
  const targets: string[] = [];
  let accepted = 0;
  const closed = { fromClients: 0, toClients: 0 };
  const server = new ProxyServer({
    host: opts.host,
    port: 0,
    verbose: false,
    prepareRequestFunction: ({ username: u, password: p, hostname, port }) => {
      if (u !== username || p !== password) return { requestAuthentication: true };
      accepted++;
      targets.push(`${hostname}:${port}`);
      return { localAddress: opts.host };
    },
  });
  server.on('connectionClosed', ({ stats }: { stats?: { srcRxBytes: number; srcTxBytes: number } }) => {
    if (!stats) return;
    closed.fromClients += stats.srcRxBytes;
    closed.toClients += stats.srcTxBytes;
  });
  await server.listen();
  const port = server.port;
  return {
    url: `http://${encodeURIComponent(username)}:${encodeURIComponent(password)}@${opts.host}:${port}`,
    host: opts.host,
    port,
    requests: () => accepted,
    targets,
    bytes: () => {
      const total = { ...closed };
      for (const id of server.getConnectionIds()) {
        const s = server.getConnectionStats(Number(id));
        if (!s) continue;
        total.fromClients += s.srcRxBytes;
        total.toClients += s.srcTxBytes;
      }
      return total;
    },
    close: () => server.close(true),
  };
}

/**
 * An IP echo endpoint: answers `{"ip": ...}` with the caller's public address. On loopback every
 * exit is 127.0.0.x, so the test gives the public address each exit stands for (what a real exit's
 * provider would NAT it to); a caller not in the table gets its loopback address.
 */
export async function startIpEcho(
  publicAddressOf: Record<string, string>,
): Promise<{ url: string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server: Server = createServer((req, res) => {
    hits++;
    const from = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ip: publicAddressOf[from] ?? from }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/ip`,
    hits: () => hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

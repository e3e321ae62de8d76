import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP relay the test owns between the fleet and a real server (Postgres, say), so a test can cut
 * the fleet's connections for real, every open one reset and every new one refused, without
 * touching the shared server, and then restore them.
 */
export interface TcpProxy {
  port: number;
  /** Reset every open connection and every new one until `restore()`. */
  cut: () => void;
  restore: () => void;
  /**
   * Stop relaying bytes either way while every connection stays open (a silently dead path: a
   * dropped NAT entry, a frozen peer); new connections hang the same way. `restore()` undoes it.
   */
  freeze: () => void;
  /** Connections relayed so far (to see that traffic really went through). */
  connections: () => number;
  close: () => Promise<void>;
}

export async function startTcpProxy(
  target: { host: string; port: number },
  opts: {
    /** Relay the server's bytes to the client yourself (to rewrite them); default: piped unchanged. */
    downstream?: (upstream: Socket, client: Socket) => void;
  } = {},
): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let down = false;
  let frozen = false;
  let relayed = 0;
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  const server: Server = createServer((client) => {
    if (down) {
      client.resetAndDestroy();
      return;
    }
    relayed++;
    const upstream = connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const drop = () => {
      open.delete(client);
      open.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    if (frozen) {
      // Accepted, never relayed: the connection hangs.
      client.pause();
      return;
    }
    const pair = { client, upstream };
    pairs.add(pair);
    client.on('close', () => pairs.delete(pair));
    client.pipe(upstream);
    if (opts.downstream) opts.downstream(upstream, client);
    else upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    cut: () => {
      down = true;
      for (const s of open) s.resetAndDestroy();
      open.clear();
    },
    restore: () => {
      down = false;
      frozen = false;
    },
    freeze: () => {
      frozen = true;
      for (const p of pairs) {
        p.client.unpipe(p.upstream);
        p.upstream.unpipe(p.client);
        p.client.pause();
        p.upstream.pause();
      }
    },
    connections: () => relayed,
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

import { createServer, connect, type Server, type Socket } from 'node:net';
import type { TcpProxy } from './tcp-proxy.js';

/**
 * A TCP relay in front of a Kafka broker that a test can cut and restore, like `startTcpProxy` for
 * Postgres, without touching the shared broker.
 *
 * A plain relay is not enough for Kafka: a client uses the bootstrap address only for its first
 * metadata request, then connects to each broker at the address the broker *advertises*
 * (`advertised.listeners`, here 127.0.0.1:9092), around the relay, and cutting the relay would cut
 * nothing but the bootstrap connection. So this relay rewrites the broker's answers: wherever a
 * response carries the advertised host and port as a Kafka string plus int32 (Metadata's broker
 * list, FindCoordinator's coordinator), the port becomes the relay's. Same length, so frame sizes
 * stay valid; responses are rewritten whole frame by frame (4-byte size prefix), never across
 * chunk boundaries. Both string encodings are covered (classic: int16 length; compact: varint
 * length + 1). Message payloads are JSON, which never holds the zero bytes of the pattern.
 */
export async function startKafkaProxy(broker: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let down = false;
  let relayed = 0;
  let listenPort = 0;
  const hostBytes = Buffer.from(broker.host, 'utf8');
  const portBytes = (p: number) => {
    const b = Buffer.alloc(4);
    b.writeInt32BE(p);
    return b;
  };
  const patterns = () => {
    const classicLen = Buffer.alloc(2);
    classicLen.writeInt16BE(hostBytes.length);
    const compactLen = Buffer.from([hostBytes.length + 1]);
    return [classicLen, compactLen].map((len) => ({
      from: Buffer.concat([len, hostBytes, portBytes(broker.port)]),
      to: Buffer.concat([len, hostBytes, portBytes(listenPort)]),
    }));
  };
  let rewrites: { from: Buffer; to: Buffer }[] = [];

  const rewrite = (frame: Buffer) => {
    for (const { from, to } of rewrites) {
      for (let i = frame.indexOf(from); i !== -1; i = frame.indexOf(from, i + from.length)) to.copy(frame, i);
    }
    return frame;
  };

  const server: Server = createServer((client) => {
    if (down) {
      client.resetAndDestroy();
      return;
    }
    relayed++;
    const upstream = connect(broker.port, broker.host);
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
    client.pipe(upstream);
    let pending: Buffer = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= 4) {
        const size = pending.readInt32BE(0);
        if (pending.length < 4 + size) break;
        client.write(rewrite(Buffer.from(pending.subarray(0, 4 + size))));
        pending = pending.subarray(4 + size);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  listenPort = (server.address() as { port: number }).port;
  rewrites = patterns();
  return {
    port: listenPort,
    cut: () => {
      down = true;
      for (const s of open) s.resetAndDestroy();
      open.clear();
    },
    restore: () => {
      down = false;
    },
    connections: () => relayed,
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

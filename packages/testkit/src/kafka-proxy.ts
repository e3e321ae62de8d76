import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

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
  const hostBytes = Buffer.from(broker.host, 'utf8');
  const portBytes = (p: number) => {
    const b = Buffer.alloc(4);
    b.writeInt32BE(p);
    return b;
  };
  const patterns = (listenPort: number) => {
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

  // The relay's own port is known once it listens, before anyone can connect through it.
  const proxy = await startTcpProxy(broker, {
    downstream: (upstream, client) => {
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
    },
  });
  rewrites = patterns(proxy.port);
  return proxy;
}

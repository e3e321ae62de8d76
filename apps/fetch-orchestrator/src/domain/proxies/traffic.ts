import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';

/**
 * Proxy traffic counted where the bytes really flow: on the TCP sockets to the proxy exit, so the
 * CONNECT handshake, TLS records, headers and the compressed body all count, exactly as the proxy
 * network bills them (a decoded body would undercount).
 *
 * The proxy agent opens its socket deep inside got and hpagent; Node announces every new client
 * socket on the `net.client.socket` diagnostics channel, synchronously in the context that opened
 * it, so the meter of the fetch running in that context (an AsyncLocalStorage store) claims it.
 * Sockets opened outside a metered fetch (the ledger client, Kafka, Postgres) are not counted.
 */
const current = new AsyncLocalStorage<TrafficMeter>();

subscribe('net.client.socket', (message) => {
  const meter = current.getStore();
  if (meter) meter.track((message as { socket: Socket }).socket);
});

export interface TrafficCount {
  /** False when a socket's counters could not be read: the count is then not a measurement. */
  measured: boolean;
  request_bytes: number;
  response_bytes: number;
}

export class TrafficMeter {
  private readonly sockets = new Set<Socket>();

  track(socket: Socket): void {
    this.sockets.add(socket);
  }

  /** Run `fn` with every client socket it opens counted by this meter. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    return current.run(this, fn);
  }

  /** Bytes written to and read from the exits so far (a closed socket keeps its counters). */
  count(): TrafficCount {
    let sent = 0;
    let received = 0;
    let measured = true;
    for (const s of this.sockets) {
      const w = s.bytesWritten;
      const r = s.bytesRead;
      if (!Number.isSafeInteger(w) || !Number.isSafeInteger(r)) measured = false;
      else {
        sent += w;
        received += r;
      }
    }
    return { measured, request_bytes: sent, response_bytes: received };
  }

  /** Sockets the fetch opened (0 means nothing went over the wire). */
  get connections(): number {
    return this.sockets.size;
  }
}

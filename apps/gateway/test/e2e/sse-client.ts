import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';

export interface SseMessage {
  id: string | undefined;
  data: string;
  /** Milliseconds since the stream was opened. */
  at: number;
}

export interface SseStream {
  status: number;
  headers: IncomingHttpHeaders;
  messages: SseMessage[];
  comments: string[];
  retry: number | undefined;
  /** Resolves when the server ends the response (or the client closes it). */
  ended: Promise<void>;
  isEnded: () => boolean;
  /** The raw body of a non-stream answer (errors, 204). */
  body: () => string;
  /** Wait until `n` messages arrived. */
  waitForMessages: (n: number, timeoutMs?: number) => Promise<SseMessage[]>;
  close: () => void;
}

/** A minimal Server-Sent Events client over node:http, exposing the raw framing for assertions. */
export function openEventStream(baseUrl: string, path: string, headers: Record<string, string>): Promise<SseStream> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${baseUrl}${path}`,
      { method: 'GET', headers: { Accept: 'text/event-stream', ...headers } },
      (res: IncomingMessage) => {
        const messages: SseMessage[] = [];
        const comments: string[] = [];
        let retry: number | undefined;
        let buffer = '';
        let raw = '';
        let ended = false;
        const waiters = new Set<() => void>();
        const notify = () => waiters.forEach((w) => w());
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          raw += chunk;
          buffer += chunk;
          let i: number;
          while ((i = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, i);
            buffer = buffer.slice(i + 2);
            let id: string | undefined;
            const data: string[] = [];
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) comments.push(line.slice(1).trim());
              else if (line.startsWith('id:')) id = line.slice(3).trim();
              else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
              else if (line.startsWith('retry:')) retry = Number(line.slice(6).trim());
            }
            if (data.length > 0) messages.push({ id, data: data.join('\n'), at: Date.now() - t0 });
          }
          notify();
        });
        const ended$ = new Promise<void>((done) => {
          const finish = () => {
            ended = true;
            notify();
            done();
          };
          res.on('end', finish);
          res.on('close', finish);
        });
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          messages,
          comments,
          get retry() {
            return retry;
          },
          ended: ended$,
          isEnded: () => ended,
          body: () => raw,
          waitForMessages: (n, timeoutMs = 15_000) =>
            new Promise((ok, fail) => {
              const check = () => {
                if (messages.length >= n) {
                  cleanup();
                  ok(messages.slice());
                } else if (ended) {
                  cleanup();
                  fail(new Error(`stream ended after ${messages.length} of ${n} messages: ${raw}`));
                }
              };
              const timer = setTimeout(() => {
                cleanup();
                fail(new Error(`only ${messages.length} of ${n} messages within ${timeoutMs} ms: ${raw}`));
              }, timeoutMs);
              const cleanup = () => {
                clearTimeout(timer);
                waiters.delete(check);
              };
              waiters.add(check);
              check();
            }),
          close: () => {
            req.destroy();
          },
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import got, { type RequestError } from 'got';
import type { TargetPolicy } from '@wdr/kit/target-policy';

export interface FetchInput {
  url: string;
  timeoutMs: number;
  headers: Record<string, string>;
  cookies: Record<string, string>;
  userAgent: string | undefined;
  /** Tunnel through a proxy exit (domain/proxies/transport.ts); absent: direct. */
  agents?: { http: HttpAgent; https: HttpsAgent };
}

export type FetchOutcome =
  | {
      ok: true;
      statusCode: number;
      contentType: string | null;
      headers: Record<string, string | string[] | undefined>;
      body: Buffer;
      finalUrl: string;
      redirects: number;
    }
  | { ok: false; code: FetchFailureCode; message: string; statusCode?: number };

/** Why an HTTP stage failed; tenants see these codes in `error.code`. */
export type FetchFailureCode =
  | 'TARGET_BLOCKED'
  | 'TARGET_UNREACHABLE'
  | 'TARGET_TIMEOUT'
  | 'TARGET_SERVER_ERROR'
  | 'TARGET_TOO_LARGE'
  | 'TOO_MANY_REDIRECTS'
  /** The proxy exit itself failed (refused, reset, rejected the credentials): try another exit. */
  | 'EXIT_FAILED';

const DEFAULT_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';

/**
 * The HTTP stage: one GET with got, every redirect hop re-checked against the target policy,
 * the body capped. Every answer of the target comes back as it is (the stage decides what a 5xx
 * or a challenge page means); transport failures come back as their failure code.
 */
export async function fetchPage(input: FetchInput, policy: TargetPolicy, maxBytes: number): Promise<FetchOutcome> {
  const proxied = input.agents !== undefined;
  // Through a proxy the exit resolves the name, so the resolved addresses are checked here first.
  const first = proxied ? await policy.checkResolved(new URL(input.url)) : policy.checkUrl(new URL(input.url));
  if (first) return { ok: false, code: 'TARGET_BLOCKED', message: first };
  const cookieHeader = Object.entries(input.cookies)
    .map(([k, v]) => `${k}=${v}`)
    .join('; ');
  let redirects = 0;
  const abort = new AbortController();
  const request = got(input.url, {
    method: 'GET',
    headers: {
      'user-agent': input.userAgent ?? DEFAULT_UA,
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      ...input.headers,
      ...(cookieHeader ? { cookie: cookieHeader } : {}),
    },
    dnsLookup: policy.lookup,
    ...(input.agents ? { agent: input.agents } : {}),
    timeout: { request: input.timeoutMs },
    retry: { limit: 0 },
    throwHttpErrors: false,
    followRedirect: true,
    maxRedirects: 10,
    decompress: true,
    responseType: 'buffer',
    signal: abort.signal,
    hooks: {
      beforeRedirect: [
        async (options) => {
          redirects++;
          const url = options.url instanceof URL ? options.url : new URL(String(options.url));
          const problem = proxied ? await policy.checkResolved(url) : policy.checkUrl(url);
          if (problem) throw new Error(`redirect refused: ${problem}`);
        },
      ],
    },
  });
  let tooLarge = false;
  // `on` returns the request itself, awaited (and its rejection caught) just below.
  void request.on('downloadProgress', (p) => {
    if (p.transferred > maxBytes && !tooLarge) {
      tooLarge = true;
      abort.abort();
    }
  });
  try {
    const res = await request;
    return {
      ok: true,
      statusCode: res.statusCode,
      contentType: res.headers['content-type'] ?? null,
      headers: res.headers,
      body: Buffer.from(res.body),
      finalUrl: res.url,
      redirects,
    };
  } catch (err) {
    if (tooLarge) return { ok: false, code: 'TARGET_TOO_LARGE', message: `the page is larger than ${maxBytes} bytes` };
    const e = err as RequestError & { code?: string };
    if (e.code === 'ETARGETBLOCKED' || String(e.message).startsWith('redirect refused')) {
      return { ok: false, code: 'TARGET_BLOCKED', message: 'the target address is not allowed' };
    }
    if (proxied) {
      const exitProblem = exitFailureOf(e);
      if (exitProblem) return { ok: false, code: 'EXIT_FAILED', message: exitProblem };
    }
    if (e.code === 'ETIMEDOUT') return { ok: false, code: 'TARGET_TIMEOUT', message: `no complete answer within ${input.timeoutMs} ms` };
    if (e.code === 'ERR_TOO_MANY_REDIRECTS') return { ok: false, code: 'TOO_MANY_REDIRECTS', message: 'more than 10 redirects' };
    return { ok: false, code: 'TARGET_UNREACHABLE', message: 'the target could not be reached' };
  }
}

/** Failures of the exit itself (as opposed to the target behind it); the text never names the exit. */
function exitFailureOf(e: RequestError & { code?: string }): string | undefined {
  const cause = (e as { cause?: { message?: string; code?: string } }).cause;
  const message = String(cause?.message ?? e.message);
  const code = cause?.code ?? e.code;
  if (
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'EPIPE' ||
    code === 'EHOSTUNREACH' ||
    code === 'ENOTFOUND' ||
    code === 'EAI_AGAIN'
  ) {
    return `the proxy exit failed (${code})`;
  }
  if (/Bad response: 40[37]/.test(message)) return 'the proxy exit refused the connection';
  if (/Proxy timeout/.test(message)) return 'the proxy exit did not answer';
  return undefined;
}

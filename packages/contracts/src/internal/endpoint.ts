import type { z } from 'zod';
import type { ServiceName } from '../events/catalog.js';

/**
 * One internal HTTP endpoint (`/internal/v1/*`), described once for both ends: the callee mounts
 * `route` and parses `params` / `query` / `body` with these schemas; the caller builds the path with
 * `path(...)` and gets the answer typed (`@wdr/kit/internal-call`'s `callInternal`). `callers` names
 * the services allowed to call it: the callee's gate (`@wdr/kit/service-identity`) answers 401 to a
 * call without a valid service token and 403 to a service not named here (docs/architecture.md).
 */
export type HttpMethod = 'GET' | 'POST';

/**
 * The answer of an endpoint that sends stored bytes as its body (`Content-Type` and
 * `Content-Length` say what they are), never JSON: the caller reads it as a stream
 * (`@wdr/kit/internal-call`'s `streamInternal`), so a large page is never held whole as text.
 * Errors are PublicError JSON bodies as everywhere.
 */
export interface BytesAnswer {
  readonly __bytes: true;
}

/** Names of the `:params` of an Express route pattern: `/a/:id/b/:name` -> `'id' | 'name'`. */
export type RouteParamNames<R extends string> = R extends `${string}:${infer P}/${infer Rest}`
  ? P | RouteParamNames<`/${Rest}`>
  : R extends `${string}:${infer P}`
    ? P
    : never;

type ParamSchemas<R extends string> = { readonly [K in RouteParamNames<R>]: z.ZodType<string> };
type ParamValues<R extends string> = { readonly [K in RouteParamNames<R>]: string };

export interface InternalEndpoint<
  M extends HttpMethod = HttpMethod,
  R extends string = string,
  B extends z.ZodType | undefined = z.ZodType | undefined,
  Q extends z.ZodType | undefined = z.ZodType | undefined,
  A = unknown,
> {
  readonly method: M;
  /**
   * The services that may call it, as the code calls it (every `callInternal` of this endpoint):
   * any other service is refused with 403. Empty: no service may (an operator's route).
   */
  readonly callers: readonly ServiceName[];
  /** Express route pattern, e.g. `/internal/v1/requests/:id`. */
  readonly route: R;
  /** One schema per path parameter (the callee parses each one on its own). */
  readonly params: ParamSchemas<R>;
  /** Schema of the JSON body (POST), or undefined. */
  readonly body: B;
  /** Schema of the query string, or undefined. */
  readonly query: Q;
  /** `json` (the default): a JSON answer; `bytes`: the body is the bytes themselves (BytesAnswer). */
  readonly answerKind: 'json' | 'bytes';
  /**
   * `json` (the default): the request body is JSON parsed by `body`; `bytes`: it is raw bytes
   * (`application/octet-stream`, with Content-Length), sent with `@wdr/kit/internal-call`'s
   * `sendBytesInternal` and read by the callee as a stream, never parsed as JSON.
   */
  readonly bodyKind: 'json' | 'bytes';
  /** The concrete path: `route` with each `:param` replaced by its (URI-encoded) value. */
  path(params: ParamValues<R>): string;
  /** Type only: what the callee answers. Never set at run time. */
  readonly answer?: A;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyInternalEndpoint = InternalEndpoint<HttpMethod, string, any, any, any>;

/** Describes an endpoint; the answer type comes first: `endpoint<Answer>()({ method, route, ... })`. */
export function endpoint<A>() {
  return <
    const M extends HttpMethod,
    const R extends string,
    B extends z.ZodType | undefined = undefined,
    Q extends z.ZodType | undefined = undefined,
  >(
    def: {
      method: M;
      callers: readonly ServiceName[];
      route: R;
      params: ParamSchemas<R>;
      body?: B;
      query?: Q;
      bodyKind?: 'json' | 'bytes';
      // An endpoint answering BytesAnswer must say so (its body is the bytes, not JSON); no other may.
    } & ([A] extends [BytesAnswer] ? { answerKind: 'bytes' } : { answerKind?: 'json' }),
  ): InternalEndpoint<M, R, B, Q, A> => ({
    method: def.method,
    callers: Object.freeze([...def.callers]),
    route: def.route,
    params: def.params,
    body: def.body as B,
    query: def.query as Q,
    answerKind: def.answerKind ?? 'json',
    bodyKind: def.bodyKind ?? 'json',
    path: (values) => buildPath(def.route, values as Record<string, string>),
  });
}

function buildPath(route: string, values: Record<string, string>): string {
  return route.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
    const v = values[name];
    if (typeof v !== 'string') throw new Error(`${route}: path parameter ${name} is missing`);
    return encodeURIComponent(v);
  });
}

/**
 * What a query string carries, as the caller writes it. Query schemas coerce (their input type is
 * `unknown`); the caller then passes the parsed type (`limit: number`), which the URL turns to text.
 */
export type QueryValues<Q extends z.ZodType> = {
  [K in keyof z.input<Q>]: unknown extends z.input<Q>[K] ? (K extends keyof z.output<Q> ? z.output<Q>[K] : never) : z.input<Q>[K];
};

/** The arguments of one call of `E`: its path parameters, body and query, as each is needed. */
export type InternalCallArgs<E extends AnyInternalEndpoint> = ([RouteParamNames<E['route']>] extends [never]
  ? { params?: undefined }
  : { params: ParamValues<E['route']> }) &
  (E['body'] extends z.ZodType ? { body: z.input<E['body']> } : { body?: undefined }) &
  (E['query'] extends z.ZodType ? { query: QueryValues<E['query']> } : { query?: undefined }) & {
    /** Overrides the client's default timeout for this call. */
    timeoutMs?: number;
  };

/** The answer type of `E`. */
export type InternalAnswer<E extends AnyInternalEndpoint> = Exclude<E['answer'], undefined>;

import type { Request, RequestHandler, Response } from 'express';
import { PublicError } from '@wdr/kit/errors';
import type { GatewayDeps } from '../deps.js';
import { expressAuthentication } from '../api/authentication.js';
import { publicEventOf, TERMINAL_STATUSES, type StoredRequestEvent } from '../domain/reads/request-events.js';
import { requireUuid, storedEventsOf } from '../domain/reads/request-reads.js';
import { openStreams } from '../domain/limits/reads.js';
import type { LiveSubscriber } from './live-request-events.js';
import { EXTRACTION_END_KINDS } from '@wdr/contracts';

const EXTRACTION_END: ReadonlySet<string> = new Set(EXTRACTION_END_KINDS);

/**
 * The event a stream ends on: a request's terminal event, or for an extraction request the end of
 * its extraction (its top-level status tracks the extraction; the page's terminal event comes first).
 */
export function endsStream(e: Pick<StoredRequestEvent, 'kind' | 'status'>, extraction: boolean): boolean {
  return extraction ? EXTRACTION_END.has(e.kind) : TERMINAL_STATUSES.has(e.status);
}

/** The path the tsoa controller documents (RequestReadsController.streamEvents). */
export const EVENT_STREAM_PATH = '/api/v1/data/requests/:id/events/stream';

export interface StreamSettings {
  heartbeatMs: number;
  maxDurationMs: number;
  /** Reconnection delay suggested to clients (the SSE `retry:` field). */
  retryMs: number;
  /** While live delivery is down (Kafka unreachable), how often the stream reads new stored events. */
  pollMs: number;
  /** Open streams one tenant may hold on one gateway replica (SSE_MAX_STREAMS_PER_TENANT); the next is 429. */
  maxStreamsPerTenant?: number;
}

/** `Last-Event-ID`: absent or empty means "from the start"; otherwise an integer >= 0. */
export function parseLastEventId(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return 0;
  const v = raw.trim();
  if (!/^\d{1,10}$/.test(v) || Number(v) > 2_147_483_647) {
    throw new PublicError('VALIDATION_FAILED', 'The Last-Event-ID header is not valid.', {
      details: [{ field: 'Last-Event-ID', issue: 'must be an integer >= 0' }],
    });
  }
  return Number(v);
}

/** One SSE message: the event id and the public event as `data` (one line of JSON). */
export function sseMessage(e: StoredRequestEvent): string {
  return `id: ${e.event_id}\ndata: ${JSON.stringify(publicEventOf(e))}\n\n`;
}

/**
 * One open stream. It sends each event once and in id order: the stored history after
 * `Last-Event-ID` first, then live events from Kafka (or, while the live consumer is not connected,
 * new stored events read every `pollMs`). Live events that arrive while the history
 * loads are buffered; an event already sent is skipped; an event whose id jumps past the next one
 * (something was missed) makes the stream read the gap from the stored history first. Work is
 * serialized through one promise chain, so sends never interleave.
 */
class StreamSession implements LiveSubscriber {
  private lastSent: number;
  private buffered: StoredRequestEvent[] | null = [];
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  private timers: NodeJS.Timeout[] = [];
  unsubscribe: () => void = () => undefined;

  constructor(
    private readonly deps: Pick<GatewayDeps, 'liveEvents' | 'log' | 'metrics' | 'orchestrator'>,
    private readonly res: Response,
    private readonly tenantId: string,
    private readonly requestId: string,
    lastEventId: number,
    /** An extraction request: the stream ends with its extraction, not with its page. */
    private extraction = false,
  ) {
    this.lastSent = lastEventId;
  }

  onEvent(e: StoredRequestEvent): void {
    if (this.buffered) this.buffered.push(e);
    else this.enqueue(() => this.deliverLive(e));
  }

  onResync(): void {
    // While the history loads, that load already covers whatever the consumer missed.
    if (!this.buffered) this.enqueue(() => this.catchUp());
  }

  onShutdown(): void {
    this.close('shutdown');
  }

  /** Open the response, replay the history, then switch to live delivery (or end, when terminal). */
  start(history: StoredRequestEvent[], requestTerminal: boolean, settings: StreamSettings, extraction = false): void {
    this.extraction = extraction;
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      // Reverse proxies (nginx) must not buffer the stream.
      'X-Accel-Buffering': 'no',
    });
    this.res.write(`retry: ${settings.retryMs}\n: stream of request ${this.requestId}\n\n`);
    let sawTerminal = false;
    for (const e of history) {
      if (e.event_id <= this.lastSent) continue;
      this.write(e);
      sawTerminal ||= endsStream(e, this.extraction);
    }
    if (requestTerminal || sawTerminal) {
      this.close('terminal');
      return;
    }
    const pending = this.buffered ?? [];
    this.buffered = null;
    for (const e of pending) this.enqueue(() => this.deliverLive(e));
    this.timers.push(
      setInterval(() => {
        if (!this.closed) this.res.write(': heartbeat\n\n');
      }, settings.heartbeatMs),
      setTimeout(() => this.close('max_duration'), settings.maxDurationMs),
      // Degraded mode: without a connected consumer no live event arrives, so read the stored
      // history instead; when the consumer (re)joins, onResync catches up once more. A consumer
      // counts as not ready only a minute after its last fetch, so a broker that just went away is
      // covered by a slower safety poll (every 5 × pollMs, one indexed read when nothing is new).
      (() => {
        let ticks = 0;
        return setInterval(() => {
          ticks++;
          if (!this.closed && (!this.deps.liveEvents.ready() || ticks % 5 === 0)) this.enqueue(() => this.poll());
        }, settings.pollMs);
      })(),
    );
  }

  close(reason: 'terminal' | 'max_duration' | 'shutdown' | 'client_gone' | 'error'): void {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.unsubscribe();
    this.deps.metrics.counter('sse_streams_closed_total', 'Request event streams closed, by reason.', ['reason'] as const).inc({ reason });
    if (!this.res.writableEnded && reason !== 'client_gone') {
      // A comment, not an event: tells a client reading the raw stream why it ended. On shutdown
      // the connection goes too, so the server's close does not wait for it to idle out.
      this.res.end(`: end ${reason}\n\n`, () => {
        if (reason === 'shutdown') this.res.socket?.destroy();
      });
    }
  }

  private enqueue(work: () => Promise<void>): void {
    this.chain = this.chain
      .then(() => (this.closed ? undefined : work()))
      .catch((err: unknown) => {
        this.deps.log.warn({ err, requestId: this.requestId }, 'event stream failed; closing it');
        this.close('error');
      });
  }

  private async deliverLive(e: StoredRequestEvent): Promise<void> {
    if (e.event_id <= this.lastSent) return;
    if (e.event_id > this.lastSent + 1) await this.catchUp();
    this.send(e);
  }

  /** A poll's catch-up: the orchestrator briefly unavailable (a restart) skips one poll instead of ending the stream. */
  private async poll(): Promise<void> {
    try {
      await this.catchUp();
    } catch (err) {
      if (!(err instanceof PublicError && err.code === 'DEPENDENCY_UNAVAILABLE')) throw err;
      this.deps.log.debug({ err, requestId: this.requestId }, 'event stream poll failed; next poll retries');
    }
  }

  /** Send what the stored history has after the last event sent. */
  private async catchUp(): Promise<void> {
    const history = await storedEventsOf(this.deps, this.tenantId, this.requestId, this.lastSent);
    for (const e of history.events) this.send(e);
  }

  private send(e: StoredRequestEvent): void {
    if (this.closed || e.event_id <= this.lastSent) return;
    this.write(e);
    if (endsStream(e, this.extraction)) this.close('terminal');
  }

  private write(e: StoredRequestEvent): void {
    this.res.write(sseMessage(e));
    this.lastSent = e.event_id;
  }
}

/**
 * GET /api/v1/data/requests/{id}/events/stream, as a plain Express handler (tsoa answers JSON and
 * cannot hold a response open). Authentication, the id check and the tenant check are the same as
 * the JSON endpoints'; errors before the stream starts are ordinary PublicError bodies.
 */
export function requestEventStream(
  deps: Pick<GatewayDeps, 'liveEvents' | 'log' | 'metrics' | 'orchestrator' | 'streamListeners'>,
  settings: StreamSettings,
): RequestHandler {
  // Open streams per tenant on this replica: each holds a connection, a subscription and timers.
  const streams = openStreams();
  return async (req: Request, res: Response, next) => {
    let session: StreamSession | undefined;
    let release = () => undefined as void;
    try {
      const tenant = await expressAuthentication(req, 'api_key');
      const cap = settings.maxStreamsPerTenant;
      if (cap !== undefined) {
        release = streams.enter(tenant.tenantId, cap, res);
        res.on('close', release);
      }
      const id = requireUuid(String(req.params['id']));
      const lastEventId = parseLastEventId(req.header('last-event-id'));
      if (deps.liveEvents.shuttingDown) throw new PublicError('DEPENDENCY_UNAVAILABLE', 'This instance is shutting down; reconnect.');

      // Listen to the tenant's lifecycle first (its events are mirrored on Kafka only while somebody
      // does): once in force, every event not mirrored is in the history read below.
      const unlisten = await deps.streamListeners.hold(tenant.tenantId);
      res.on('close', unlisten);
      session = new StreamSession(deps, res, tenant.tenantId, id, lastEventId);
      // Subscribe before reading the history: whatever is appended in between is buffered, not lost.
      session.unsubscribe = deps.liveEvents.subscribe(id, session);
      const history = await storedEventsOf(deps, tenant.tenantId, id, lastEventId);
      const terminal = TERMINAL_STATUSES.has(history.request_status);
      if (terminal && history.events.length === 0) {
        // Nothing will ever follow: 204 also stops a browser EventSource from reconnecting.
        session.unsubscribe();
        res.status(204).end();
        return;
      }
      const s = session;
      res.on('close', () => s.close('client_gone'));
      s.start(history.events, terminal, settings, history.extraction === true);
    } catch (err) {
      session?.unsubscribe();
      release();
      next(err);
    }
  };
}

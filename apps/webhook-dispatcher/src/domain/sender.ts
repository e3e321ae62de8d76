import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Agent, Dispatcher } from 'undici';
import { redactUrls } from '@wdr/contracts';
import { pgConnectionFor, PgListener } from '@wdr/kit/pg-listen';
import { sealedSecretAad, sealedUrlAad, type DispatcherDeps } from '../deps.js';
import { claimDue, nextDue, sweepLapsedLeases, type Claim, type ClaimLimits } from './claim.js';
import { recordDelivered, type Delivered } from './delivered-batch.js';
import { deliveryAgent } from './delivery-agent.js';
import { disableEndpoint } from './disable-endpoint.js';
import { GroupedWrites } from './grouped-writes.js';
import { parseRetryAfter, retryDelayMs } from './schedule.js';
import { signedHeaders, webhookIdOf } from './signing.js';

interface AttemptResult {
  statusCode: number | null;
  retryAfterMs: number | null;
  excerpt: string | null;
  error: string | null;
}

/** Bytes of a receiver's answer read at most (the rest is not waited for); the excerpt keeps less. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const EXCERPT_CHARS = 256;

/**
 * The sender: claims due messages from Postgres and delivers them. The database is the only source
 * of truth for what is due (`next_attempt_at`); the process keeps nothing but what it is sending.
 *
 * Claim (claim.ts): `FOR UPDATE SKIP LOCKED` over the due messages of each enabled endpoint, at
 * most `WEBHOOK_ENDPOINT_CONCURRENCY` held per endpoint (counted from the leases in the table, so
 * the bound holds across replicas up to the race of two simultaneous claims; this process runs its
 * claims one at a time) and at most the free slots of this process. A claim sets a lease
 * (`claimed_until` = `next_attempt_at` = now + timeout + 30 s, and a claim token): a sender that
 * dies mid-delivery leaves the lease to run out; a sweep (every WEBHOOK_POLL_MS, and when a claim
 * finds nothing) gives it up, and another sender sends the message again (at least once). Every
 * attempt's result, the message's new state and the endpoint's consequences (410, exhausted
 * schedule) commit together: a failed attempt in its own transaction, successful ones in
 * groups (recordDelivered: one statement for the attempts that end while the previous group is
 * written, which also claims what their freed slots can take); a delivered message is never
 * claimed again.
 *
 * Wakes on `NOTIFY wdr_webhooks` (the fan-out's insert trigger, redeliveries), when a delivery ends
 * (a slot is free), when the earliest retry it knows of falls due (one timer: a retry this process
 * scheduled, or the earliest due time read when a claim found nothing), and every WEBHOOK_POLL_MS
 * (lost notifications, another replica's schedule, leases that ran out).
 *
 * The claim and the success records run on PgSql (node-postgres, prepared statements), the POST on
 * undici's dispatcher: in the profile of the earlier loop (Prisma's raw queries, node:http) those
 * two layers, not the work itself, took most of the CPU of a delivery.
 */
export class DeliverySender {
  private running = false;
  private draining = false;
  private again = false;
  private inFlight = 0;
  private readonly sending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  /** The one-shot wake for the earliest retry known here. */
  private wake: { at: number; timer: NodeJS.Timeout } | undefined;
  private lastDrainAt = Date.now();
  /** When leases that ran out were last given up (0: at the first drain). */
  private lastSweepAt = 0;
  private readonly listener: PgListener;
  private readonly schema: string;
  private readonly agent: Agent;
  private readonly delivered: GroupedWrites<Delivered>;
  /** Claims run one at a time in this process (two at once could both see an endpoint's room). */
  private claiming: Promise<unknown> = Promise.resolve();
  private readonly openedEndpoints = new Map<string, Opened>();
  private readonly deliveries;
  private readonly duration;
  private readonly disabled;

  constructor(private readonly deps: DispatcherDeps) {
    const { schema, config } = pgConnectionFor(deps.env.DATABASE_URL);
    this.schema = schema;
    this.listener = new PgListener({
      connection: config,
      channel: 'wdr_webhooks',
      log: deps.log,
      onNotify: (payload) => payload === this.schema && this.kick(),
      onListening: () => this.kick(),
      // A lost notification delays a first attempt until the poll (WEBHOOK_POLL_MS), loses nothing.
      heartbeatMs: 30_000,
    });
    this.delivered = new GroupedWrites((group) => this.recordGroup(group));
    this.agent = deliveryAgent(deps.policy, { timeoutMs: deps.env.WEBHOOK_TIMEOUT_MS, connections: deps.env.WEBHOOK_CONCURRENCY });
    this.deliveries = deps.metrics.counter('deliveries_total', 'Webhook delivery attempts, by outcome (delivered, retry, exhausted).', [
      'outcome',
    ]);
    this.duration = deps.metrics.histogram(
      'delivery_duration_seconds',
      "Webhook delivery attempts: time to the receiver's answer or failure.",
      ['outcome'],
      [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    );
    this.disabled = deps.metrics.counter(
      'endpoints_disabled_total',
      'Webhook endpoints disabled by the sender, by reason (gone, sustained_failure).',
      ['reason'],
    );
  }

  start(): void {
    this.running = true;
    this.listener.start();
    this.timer = setInterval(() => this.kick(), this.deps.env.WEBHOOK_POLL_MS);
    this.kick();
  }

  /** Stops claiming; deliveries in flight finish and record their result. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearInterval(this.timer);
    if (this.wake) clearTimeout(this.wake.timer);
    await this.listener.stop();
    await Promise.allSettled([...this.sending]);
    await this.agent.destroy().catch(() => undefined);
  }

  /** Claims keep succeeding (a sender that cannot read its schedule for a minute is unready). */
  healthy(): boolean {
    return this.running && Date.now() - this.lastDrainAt < Math.max(60_000, this.deps.env.WEBHOOK_POLL_MS * 3);
  }

  kick(): void {
    if (!this.running) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = true;
    void this.drain().finally(() => {
      this.draining = false;
    });
  }

  private async drain(): Promise<void> {
    do {
      this.again = false;
      try {
        // Leases that ran out are given up once every poll interval, whatever else the drain finds
        // (a busy sender's claims always find work), and when a claim found nothing due.
        if (Date.now() - this.lastSweepAt >= this.deps.env.WEBHOOK_POLL_MS) await this.sweep();
        // Messages claimed by this drain; undefined when no slot was free to claim with.
        let claimed: number | undefined;
        for (;;) {
          const more = await this.exclusive(async () => {
            const free = this.deps.env.WEBHOOK_CONCURRENCY - this.inFlight;
            if (!this.running || free <= 0) return false;
            const claims = await claimDue(this.deps.sql, this.limits(free));
            for (const c of claims) this.launch(c);
            claimed = (claimed ?? 0) + claims.length;
            return claims.length === free;
          });
          if (!more) break;
        }
        // A claim found nothing due: give up the leases that ran out, if any did since the last
        // sweep, and claim again; else wake when the earliest retry falls due (claim.ts nextDue).
        if (claimed === 0) {
          const next = await nextDue(this.deps.sql);
          if (next.lapsed) {
            // The sweep clears every lease nextDue calls lapsed: the next round finds none left.
            await this.sweep();
            this.again = true;
          } else if (next.ms !== null) this.wakeIn(next.ms);
        }
        this.lastDrainAt = Date.now();
      } catch (err) {
        this.deps.log.warn({ err }, 'claiming due webhook messages failed; next try at the next poll');
        return;
      }
    } while (this.again && this.running);
  }

  /** Gives up the leases that ran out (claim.ts), one at a time with this process's claims and records. */
  private sweep(): Promise<number> {
    this.lastSweepAt = Date.now();
    return this.exclusive(async () => {
      const n = await sweepLapsedLeases(this.deps.sql);
      if (n > 0) this.deps.log.info({ leases: n }, 'webhook leases that ran out given up; their messages are due again');
      return n;
    });
  }

  /** Kick when `ms` from now, unless a wake is already set for earlier. */
  private wakeIn(ms: number): void {
    if (!this.running) return;
    const delay = Math.min(Math.max(0, Math.ceil(ms)), 2_147_000_000);
    const at = Date.now() + delay;
    if (this.wake && this.wake.at <= at) return;
    if (this.wake) clearTimeout(this.wake.timer);
    // A few ms late: the claim compares next_attempt_at with the database's now().
    const timer = setTimeout(() => {
      this.wake = undefined;
      this.kick();
    }, delay + 5);
    timer.unref();
    this.wake = { at, timer };
  }

  private launch(c: Claim): void {
    this.inFlight++;
    const p = this.deliver(c)
      .catch((err: unknown) =>
        this.deps.log.error({ err, message: webhookIdOf(c.id) }, 'recording a webhook attempt failed; the lease will hand it out again'),
      )
      .finally(() => {
        this.inFlight--;
        this.sending.delete(p);
        this.kick();
      });
    this.sending.add(p);
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.claiming.then(fn, fn);
    this.claiming = run.catch(() => undefined);
    return run;
  }

  private limits(limit: number): ClaimLimits {
    return {
      limit: Math.max(0, limit),
      perEndpoint: this.deps.env.WEBHOOK_ENDPOINT_CONCURRENCY,
      leaseMs: this.deps.env.WEBHOOK_TIMEOUT_MS + 30_000,
      token: randomUUID(),
    };
  }

  /**
   * A group of successes recorded, and the slots they free refilled in the same statement
   * (recordDelivered): the group's deliveries still count in `inFlight` until this resolves, so
   * what may be claimed is the free slots plus theirs. Their POSTs are over, so no more requests
   * than WEBHOOK_CONCURRENCY are ever in flight.
   */
  private recordGroup(group: Delivered[]): Promise<void> {
    return this.exclusive(async () => {
      const free = this.running ? this.deps.env.WEBHOOK_CONCURRENCY - this.inFlight + group.length : 0;
      const claims = await recordDelivered(this.deps.sql, group, this.limits(free));
      for (const c of claims) this.launch(c);
    });
  }

  /**
   * An endpoint's URL and secrets, opened once per sealed value: keyed by the endpoint and its sealed
   * strings, so a rotation or a new URL (new sealed values) opens again. Bounded: cleared past 10,000.
   */
  private opened(c: Claim): Opened {
    const hit = this.openedEndpoints.get(c.endpoint_id);
    if (hit && hit.urlSealed === c.url_sealed && hit.secretSealed === c.secret_sealed && hit.previousSealed === c.previous_secret_sealed)
      return hit;
    const { sealer } = this.deps;
    const url = new URL(sealer.open(c.url_sealed, sealedUrlAad(c.endpoint_id)));
    const entry: Opened = {
      urlSealed: c.url_sealed,
      secretSealed: c.secret_sealed,
      previousSealed: c.previous_secret_sealed,
      origin: url.origin,
      path: url.pathname + url.search,
      // Scheme, credentials and literal addresses, judged once per URL; names are judged at every connection.
      blocked: this.deps.policy.checkUrl(url) !== undefined,
      secret: sealer.open(c.secret_sealed, sealedSecretAad(c.endpoint_id)),
      previous: c.previous_secret_sealed ? sealer.open(c.previous_secret_sealed, sealedSecretAad(c.endpoint_id)) : null,
    };
    if (this.openedEndpoints.size >= 10_000) this.openedEndpoints.clear();
    this.openedEndpoints.set(c.endpoint_id, entry);
    return entry;
  }

  private async deliver(c: Claim): Promise<void> {
    const target = this.opened(c);
    const { secret, previous } = target;
    const secrets = [secret];
    // The previous secret signs beside the new one until it expires (checked at each attempt).
    if (previous && c.previous_secret_expires_at && c.previous_secret_expires_at.getTime() > Date.now()) secrets.push(previous);
    const webhookId = webhookIdOf(c.id);
    const started = performance.now();
    const result = await this.post(target, c.body, {
      'content-type': 'application/json',
      'user-agent': 'wdr-webhooks/1',
      'accept-encoding': 'identity',
      ...signedHeaders(secrets, webhookId, Math.floor(Date.now() / 1000), c.body),
    });
    const latencyMs = Math.round(performance.now() - started);
    const delivered = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const outcome = await this.record(c, result, latencyMs, delivered);
    this.deliveries.inc({ outcome });
    this.duration.observe({ outcome }, latencyMs / 1000);
  }

  /**
   * One POST through undici's dispatcher (an HTTP/1.1 keep-alive pool per origin, no pipelining),
   * the answer taken as it streams in, without a response object or stream. Every new connection
   * goes through the target policy (the agent's connect hook: literal addresses judged there, names
   * resolved by the policy's lookup); no redirects are followed (undici follows none unless asked);
   * the whole attempt (waiting for a connection, connecting, sending, the answer) is bounded by
   * WEBHOOK_TIMEOUT_MS; more than MAX_RESPONSE_BYTES of answer fails the attempt.
   */
  private post(target: Opened, body: string, headers: Record<string, string>): Promise<AttemptResult> {
    if (target.blocked) return Promise.resolve({ statusCode: null, retryAfterMs: null, excerpt: null, error: 'target_blocked' });
    return new Promise((resolve) => {
      let settled = false;
      let controller: Dispatcher.DispatchController | undefined;
      let abortWhenStarted: Error | undefined;
      let status = 0;
      let retryAfter: string | undefined;
      const kept: Buffer[] = [];
      let keptBytes = 0;
      let size = 0;
      const settle = (r: AttemptResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(r);
      };
      const fail = (error: string) => settle({ statusCode: null, retryAfterMs: null, excerpt: null, error });
      const abort = (error: string) => {
        fail(error);
        const reason = new Error(error);
        if (controller) controller.abort(reason);
        else abortWhenStarted = reason; // still waiting for a connection
      };
      const timer = setTimeout(() => abort('timeout'), this.deps.env.WEBHOOK_TIMEOUT_MS);
      try {
        this.agent.dispatch(
          { origin: target.origin, path: target.path, method: 'POST', headers, body },
          {
            onRequestStart: (c) => {
              controller = c;
              if (abortWhenStarted) c.abort(abortWhenStarted);
            },
            onResponseStart: (_c, statusCode, h) => {
              status = statusCode;
              const ra = h['retry-after'];
              retryAfter = Array.isArray(ra) ? ra[0] : ra;
              if (Number(h['content-length'] ?? 0) > MAX_RESPONSE_BYTES) abort('response_too_large');
            },
            onResponseData: (_c, chunk) => {
              size += chunk.length;
              if (size > MAX_RESPONSE_BYTES) return abort('response_too_large');
              // Only the excerpt's worth is kept (the excerpt reads at most 4 bytes a character).
              if (keptBytes < 4 * EXCERPT_CHARS) {
                kept.push(chunk);
                keptBytes += chunk.length;
              }
            },
            onResponseEnd: () =>
              settle({
                statusCode: status,
                retryAfterMs: parseRetryAfter(retryAfter, Date.now()),
                excerpt: excerptOf(kept.length === 1 ? kept[0]! : Buffer.concat(kept)),
                error: status >= 300 && status < 400 ? 'redirect' : null,
              }),
            onResponseError: (_c, err) => fail(transportErrorOf(err as NodeJS.ErrnoException)),
          },
        );
      } catch (err) {
        fail(transportErrorOf(err as NodeJS.ErrnoException));
      }
    });
  }

  /** The attempt, the message's next state and the endpoint's consequences, atomically. */
  private async record(c: Claim, r: AttemptResult, latencyMs: number, delivered: boolean): Promise<'delivered' | 'retry' | 'exhausted'> {
    if (delivered) {
      await this.delivered.add({
        messageId: c.id,
        claimToken: c.claim_token,
        endpointId: c.endpoint_id,
        attempt: c.attempts + 1,
        statusCode: r.statusCode!,
        latencyMs,
        excerpt: r.excerpt,
      });
      return 'delivered';
    }
    let retryIn: number | undefined;
    const outcome = await this.deps.db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(
        `INSERT INTO webhook_attempts (id, message_id, endpoint_id, attempt, outcome, status_code, latency_ms, response_excerpt, error)
         VALUES (gen_random_uuid(), $1::uuid, $2::uuid, $3, $4, $5, $6, $7, $8)`,
        c.id,
        c.endpoint_id,
        c.attempts + 1,
        'failed',
        r.statusCode,
        latencyMs,
        r.excerpt,
        r.error,
      );
      const owned = `id = $1::uuid AND claim_token = $2::uuid AND status = 'pending'`;
      if (r.statusCode === 410 && (await disableEndpoint(tx, c.endpoint_id, 'gone'))) this.disabled.inc({ reason: 'gone' });
      const step = c.schedule_step + 1;
      const delay = retryDelayMs(step, r.retryAfterMs);
      if (delay !== null) {
        retryIn = delay;
        await tx.$executeRawUnsafe(
          `UPDATE webhook_messages SET attempts = attempts + 1, schedule_step = $3, next_attempt_at = now() + $4 * interval '1 millisecond',
             claimed_until = NULL, claim_token = NULL WHERE ${owned}`,
          c.id,
          c.claim_token,
          step,
          delay,
        );
        return 'retry';
      }
      const n = await tx.$executeRawUnsafe(
        `UPDATE webhook_messages SET status = 'failed', attempts = attempts + 1, schedule_step = $3,
           next_attempt_at = NULL, claimed_until = NULL, claim_token = NULL WHERE ${owned}`,
        c.id,
        c.claim_token,
        step,
      );
      // Sustained failure: the schedule ran out and the endpoint took nothing since this message's first attempt.
      const silent = await tx.$queryRawUnsafe<unknown[]>(
        'SELECT 1 FROM webhook_endpoints WHERE id = $1::uuid AND (last_success_at IS NULL OR last_success_at < $2)',
        c.endpoint_id,
        c.first_attempt_at,
      );
      if (n > 0 && silent.length > 0 && (await disableEndpoint(tx, c.endpoint_id, 'sustained_failure'))) {
        this.disabled.inc({ reason: 'sustained_failure' });
        this.deps.log.warn({ endpoint: c.endpoint_id }, 'webhook endpoint disabled: its retry schedule ran out without a success');
      }
      return 'exhausted';
    });
    // Committed: this process wakes for the retry it scheduled, not at the next poll.
    if (retryIn !== undefined) this.wakeIn(retryIn);
    return outcome;
  }
}

/** An endpoint's URL and secrets, opened from their sealed values (cached while those are unchanged). */
interface Opened {
  urlSealed: string;
  secretSealed: string;
  previousSealed: string | null;
  origin: string;
  path: string;
  blocked: boolean;
  secret: string;
  previous: string | null;
}

/** The start of a receiver's answer, printable, URLs reduced to their origin, secrets masked. */
function excerptOf(body: Buffer): string | null {
  if (body.length === 0) return null;
  const text = body
    .subarray(0, 4 * EXCERPT_CHARS)
    .toString('utf8')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ' ');
  return redactUrls(text)
    .replace(/whsec_[A-Za-z0-9+/=]+/g, 'whsec_[redacted]')
    .replace(/\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 [redacted]')
    .slice(0, EXCERPT_CHARS);
}

function transportErrorOf(e: NodeJS.ErrnoException): string {
  const code = e.code ?? (e.cause as { code?: string } | undefined)?.code ?? '';
  if (code === 'ETARGETBLOCKED') return 'target_blocked';
  if (code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
    return 'timeout';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET') return 'connection_reset';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  if (/CERT|TLS|SSL|SELF_SIGNED/.test(code)) return 'tls';
  return 'network';
}

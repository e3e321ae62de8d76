import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Agent, Dispatcher } from 'undici';
import { redactUrls } from '@wdr/contracts';
import { pgConnectionFor, PgListener } from '@wdr/kit/pg-listen';
import { sealedSecretAad, sealedUrlAad, type DispatcherDeps } from '../deps.js';
import { claimDue, nextDue, sweepLapsedLeases, type Claim, type ClaimLimits } from './claim.js';
import { recordDelivered, type Delivered } from './delivered-batch.js';
import { holdMessage, queueMessages, recordDirectDelivered, type DirectDelivered, type NewMessage, type Target } from './direct.js';
import { deliveryAgent } from './delivery-agent.js';
import { disableEndpoint } from './disable-endpoint.js';
import type { DirectDeliveries } from './fan-out.js';
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
 * The sender: claims due messages from Postgres and delivers them, and posts the new messages the
 * consumer's fan-out hands it directly (deliverDirect, direct.ts: stored once when answered, or put
 * in the queue when they wait or fail). The database is the only source of truth for what is due
 * (`next_attempt_at`); the process keeps nothing but what it is sending and the direct messages
 * waiting for a slot, whose events' Kafka offsets wait for them.
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
export class DeliverySender implements DirectDeliveries {
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
  /** Direct messages waiting for a slot, per endpoint, oldest first (direct.ts). */
  private readonly waiting = new Map<string, Waiting[]>();
  private waitingCount = 0;
  /** Direct POSTs in flight, for the timer that stores them held once they run long. */
  private readonly posting = new Set<{ since: number; hold: () => void }>();
  private directTimer: NodeJS.Timeout | undefined;
  /** POSTs in flight from this process per endpoint, claimed or direct (the per-endpoint bound). */
  private readonly outPerEndpoint = new Map<string, number>();
  /** Direct POSTs in flight per endpoint, not in the table: claims count them with the leases. */
  private readonly directOut = new Map<string, number>();
  /** Endpoints whose new messages go through the queue until then (a direct POST failed or ran long). */
  private readonly queuedUntil = new Map<string, number>();
  private readonly directDelivered: GroupedWrites<DirectDelivered>;
  private readonly spilled: GroupedWrites<NewMessage>;
  /** The queue may hold due messages this process could claim (a claim last filled every free slot, or a wake-up since). */
  private dueMayWait = true;
  private lastClaimAt = 0;
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
    this.directDelivered = new GroupedWrites((group) => recordDirectDelivered(deps.sql, group));
    this.spilled = new GroupedWrites(async (group) => {
      await queueMessages(deps.sql, group);
    });
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
    // Direct messages still waiting for a slot go to the queue (their events' offsets wait for it).
    for (const queue of this.waiting.values()) for (const w of queue) this.spill(w);
    this.waiting.clear();
    this.waitingCount = 0;
    if (this.timer) clearInterval(this.timer);
    if (this.wake) clearTimeout(this.wake.timer);
    await this.listener.stop();
    // In-flight direct POSTs finish (below); the held-store timer is not needed past them.
    if (this.directTimer) clearInterval(this.directTimer);
    this.directTimer = undefined;
    await Promise.allSettled([...this.sending]);
    await this.agent.destroy().catch(() => undefined);
  }

  /** Claims keep succeeding (a sender that cannot read its schedule for a minute is unready). */
  healthy(): boolean {
    return this.running && Date.now() - this.lastDrainAt < Math.max(60_000, this.deps.env.WEBHOOK_POLL_MS * 3);
  }

  kick(): void {
    if (!this.running) return;
    this.dueMayWait = true;
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
            // Direct messages waiting for a slot come first: they hold their events' offsets.
            const free = this.deps.env.WEBHOOK_CONCURRENCY - this.inFlight - this.waitingCount;
            if (!this.running || free <= 0) return false;
            this.lastClaimAt = Date.now();
            const claims = await claimDue(this.deps.sql, this.limits(free));
            for (const c of claims) this.launch(c);
            claimed = (claimed ?? 0) + claims.length;
            // Fewer than asked: nothing more is due for this process until a wake-up (or a slot of an
            // endpoint at its bound frees: a claimed delivery's end kicks, a direct one's looks at
            // most every 100 ms, launchDirect).
            if (claims.length < free) this.dueMayWait = false;
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
    bump(this.outPerEndpoint, c.endpoint_id, 1);
    const p = this.deliver(c)
      .catch((err: unknown) =>
        this.deps.log.error({ err, message: webhookIdOf(c.id) }, 'recording a webhook attempt failed; the lease will hand it out again'),
      )
      .finally(() => {
        this.inFlight--;
        bump(this.outPerEndpoint, c.endpoint_id, -1);
        this.sending.delete(p);
        this.pump();
        this.kick();
      });
    this.sending.add(p);
  }

  takesDirect(endpointId: string): boolean {
    if (!this.running || this.deps.env.WEBHOOK_DIRECT_WAIT_MS === 0) return false;
    const until = this.queuedUntil.get(endpointId);
    if (until === undefined) return true;
    if (until > Date.now()) return false;
    this.queuedUntil.delete(endpointId);
    return true;
  }

  deliverDirect(m: NewMessage, target: Target): Promise<void> {
    return new Promise((resolve, reject) => {
      const claimedHere = (this.outPerEndpoint.get(m.endpointId) ?? 0) - (this.directOut.get(m.endpointId) ?? 0);
      const w: Waiting = {
        m,
        target,
        // Leases held by other senders when the fan-out read the endpoint: its slots they take.
        elsewhere: Math.max(0, target.held - claimedHere),
        since: Date.now(),
        resolve,
        reject,
      };
      const queue = this.waiting.get(m.endpointId);
      if (queue) queue.push(w);
      else this.waiting.set(m.endpointId, [w]);
      this.waitingCount++;
      this.pump();
      this.watchDirect();
    });
  }

  /** A direct message that waited too long for a slot, into the queue, due now. */
  private spill(w: Waiting): void {
    this.spilled.add(w.m).then(w.resolve, w.reject);
  }

  /** Starts the waiting direct messages that have a slot, oldest first per endpoint. */
  private pump(): void {
    const perEndpoint = this.deps.env.WEBHOOK_ENDPOINT_CONCURRENCY;
    for (const [endpointId, queue] of this.waiting) {
      while (queue.length > 0 && this.running && this.inFlight < this.deps.env.WEBHOOK_CONCURRENCY) {
        if ((this.outPerEndpoint.get(endpointId) ?? 0) + queue[0]!.elsewhere >= perEndpoint) break;
        this.waitingCount--;
        this.launchDirect(queue.shift()!);
      }
      if (queue.length === 0) this.waiting.delete(endpointId);
      if (this.inFlight >= this.deps.env.WEBHOOK_CONCURRENCY) break;
    }
  }

  /**
   * One timer for every direct message, running while there are any: a message that waited
   * WEBHOOK_DIRECT_WAIT_MS for a slot goes to the queue, one whose POST started that long ago is
   * stored held (deliverNow). Checked four times per wait, so a message waits at most 1.25 times it.
   */
  private watchDirect(): void {
    if (this.directTimer) return;
    const wait = this.deps.env.WEBHOOK_DIRECT_WAIT_MS;
    this.directTimer = setInterval(
      () => {
        const due = Date.now() - wait;
        for (const [endpointId, queue] of this.waiting) {
          while (queue.length > 0 && queue[0]!.since <= due) {
            this.waitingCount--;
            this.spill(queue.shift()!);
          }
          if (queue.length === 0) this.waiting.delete(endpointId);
        }
        for (const posting of this.posting) if (posting.since <= due) posting.hold();
        if (this.waitingCount === 0 && this.posting.size === 0) {
          clearInterval(this.directTimer);
          this.directTimer = undefined;
        }
      },
      Math.max(10, Math.floor(wait / 4)),
    );
  }

  private launchDirect(w: Waiting): void {
    const endpointId = w.m.endpointId;
    this.inFlight++;
    bump(this.outPerEndpoint, endpointId, 1);
    bump(this.directOut, endpointId, 1);
    let released = false;
    // The slot is the POST's: it is free once the answer is in, while the answer is still being stored.
    const release = () => {
      if (released) return;
      released = true;
      this.inFlight--;
      bump(this.outPerEndpoint, endpointId, -1);
      bump(this.directOut, endpointId, -1);
      this.pump();
      // A freed slot of an endpoint at its bound may let its due messages be claimed; when no claim
      // is known to be needed, one at most every 100 ms looks (a burst of direct deliveries alone
      // would otherwise make a claim that finds nothing after each).
      if (this.dueMayWait || Date.now() - this.lastClaimAt >= 100) this.kick();
    };
    const p = this.deliverNow(w, release)
      .catch((err: unknown) => {
        this.deps.log.error({ err, message: webhookIdOf(w.m.id) }, 'storing a direct webhook attempt failed; its event will be read again');
        w.reject(err);
      })
      .finally(() => {
        release();
        this.sending.delete(p);
      });
    this.sending.add(p);
  }

  /**
   * A direct message posted; a success stored once, with its attempt (recordDirectDelivered). A
   * failure, or an answer not in after WEBHOOK_DIRECT_WAIT_MS, stores the message held by this
   * sender first (its event may then move on), and the attempt is recorded as a claimed message's
   * is. Either sends the endpoint's next messages through the queue for a while.
   */
  private async deliverNow(w: Waiting, postDone: () => void): Promise<void> {
    const { m, target } = w;
    const token = randomUUID();
    const leaseMs = this.deps.env.WEBHOOK_TIMEOUT_MS + 30_000;
    const firstAttemptAt = new Date();
    let held: Promise<boolean> | undefined;
    const hold = (): Promise<boolean> => {
      if (held) return held;
      this.queuedUntil.set(m.endpointId, Date.now() + QUEUED_FOR_MS);
      held = holdMessage(this.deps.sql, m, leaseMs, token, firstAttemptAt);
      held.then(() => w.resolve(), w.reject);
      return held;
    };
    let opened: Opened;
    try {
      opened = this.opened(target);
    } catch {
      // Its URL or secret cannot be opened here (a sealing key not in the ring): the queue's way,
      // whose sender says why at each claim and leaves the message pending; so go the endpoint's next ones.
      this.queuedUntil.set(m.endpointId, Date.now() + QUEUED_FOR_MS);
      postDone();
      await this.spilled.add(m);
      w.resolve();
      return;
    }
    const posting = { since: Date.now(), hold: () => void hold().catch(() => undefined) };
    this.posting.add(posting);
    const started = performance.now();
    const result = await this.post(opened, m.body, this.headersFor(opened, target.previous_secret_expires_at, m.id, m.body)).finally(() =>
      this.posting.delete(posting),
    );
    const latencyMs = Math.round(performance.now() - started);
    const delivered = succeeded(result);
    // A held message is the queue's from here: its lease, not this slot, counts against the endpoint.
    postDone();
    if (delivered && !held) {
      await this.directDelivered.add({ message: m, firstAttemptAt, statusCode: result.statusCode!, latencyMs, excerpt: result.excerpt });
      w.resolve();
      this.counted('delivered', latencyMs);
      return;
    }
    // Stored by another sender meanwhile (a replica that read the event too): its record stands.
    if (!(await hold())) return;
    const c: Claim = {
      id: m.id,
      claim_token: token,
      endpoint_id: m.endpointId,
      body: m.body,
      attempts: 0,
      schedule_step: 0,
      first_attempt_at: firstAttemptAt,
      url_sealed: target.url_sealed,
      secret_sealed: target.secret_sealed,
      previous_secret_sealed: target.previous_secret_sealed,
      previous_secret_expires_at: target.previous_secret_expires_at,
    };
    this.counted(await this.record(c, result, latencyMs, delivered), latencyMs);
  }

  /** An attempt's outcome in the metrics, once it is recorded. */
  private counted(outcome: 'delivered' | 'retry' | 'exhausted', latencyMs: number): void {
    this.deliveries.inc({ outcome });
    this.duration.observe({ outcome }, latencyMs / 1000);
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.claiming.then(fn, fn);
    this.claiming = run.catch(() => undefined);
    return run;
  }

  private limits(limit: number): ClaimLimits {
    const local = { endpointIds: [] as string[], counts: [] as number[] };
    for (const [id, n] of this.directOut) {
      local.endpointIds.push(id);
      local.counts.push(n);
    }
    return {
      limit: Math.max(0, limit),
      perEndpoint: this.deps.env.WEBHOOK_ENDPOINT_CONCURRENCY,
      leaseMs: this.deps.env.WEBHOOK_TIMEOUT_MS + 30_000,
      token: randomUUID(),
      local,
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
      const free = this.running ? Math.max(0, this.deps.env.WEBHOOK_CONCURRENCY - this.inFlight - this.waitingCount + group.length) : 0;
      const claims = await recordDelivered(this.deps.sql, group, this.limits(free));
      for (const c of claims) this.launch(c);
    });
  }

  /**
   * An endpoint's URL and secrets, opened once per sealed value: keyed by the endpoint and its sealed
   * strings, so a rotation or a new URL (new sealed values) opens again. Bounded: cleared past 10,000.
   */
  private opened(c: Pick<Claim, 'endpoint_id' | 'url_sealed' | 'secret_sealed' | 'previous_secret_sealed'>): Opened {
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

  /** A POST's headers, signed with the endpoint's secret (and the previous one until it expires, checked at each attempt). */
  private headersFor(target: Opened, previousExpiresAt: Date | null, messageId: string, body: string): Record<string, string> {
    const secrets = [target.secret];
    if (target.previous && previousExpiresAt && previousExpiresAt.getTime() > Date.now()) secrets.push(target.previous);
    return {
      'content-type': 'application/json',
      'user-agent': 'wdr-webhooks/1',
      'accept-encoding': 'identity',
      ...signedHeaders(secrets, webhookIdOf(messageId), Math.floor(Date.now() / 1000), body),
    };
  }

  private async deliver(c: Claim): Promise<void> {
    const target = this.opened(c);
    const started = performance.now();
    const result = await this.post(target, c.body, this.headersFor(target, c.previous_secret_expires_at, c.id, c.body));
    const latencyMs = Math.round(performance.now() - started);
    this.counted(await this.record(c, result, latencyMs, succeeded(result)), latencyMs);
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

/** A 2xx answer: the attempt delivered its message. */
const succeeded = (r: AttemptResult) => r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300;

/** How long an endpoint whose direct POST failed or ran long gets its new messages through the queue. */
const QUEUED_FOR_MS = 30_000;

/** A direct message waiting for a slot; its promise settles once it is stored. */
interface Waiting {
  m: NewMessage;
  target: Target;
  /** The endpoint's slots taken by other senders' leases. */
  elsewhere: number;
  /** When it was handed over (it goes to the queue WEBHOOK_DIRECT_WAIT_MS later). */
  since: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const n = (counts.get(key) ?? 0) + by;
  if (n === 0) counts.delete(key);
  else counts.set(key, n);
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

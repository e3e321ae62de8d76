import type { Admin } from 'kafkajs';
import type { Logger } from '../log.js';
import type { KafkaBus } from './bus.js';
import type { ConsumerHandle } from './consumer.js';

/** How long a consumer may complete nothing with a broker that answers before liveness fails. */
export const CONSUMER_STALL_MS = 5 * 60_000;
/** How often the watchdog looks. */
export const CONSUMER_WATCH_EVERY_MS = 15_000;

export interface WedgedConsumer {
  group: string;
  /** `gave_up`: kafkajs crashed it and will not restart it; `stalled`: no progress for the stall time while the broker answers. */
  reason: 'gave_up' | 'stalled';
  detail: string;
}

/**
 * Decides whether a service's Kafka consumers are wedged in a way only a restart of the process
 * fixes, for the liveness probe (`/healthz`). Kafka being down is never such a way: a restart
 * does not bring a broker back, and failing liveness then would restart every pod of the fleet
 * during an outage. So a consumer is wedged when
 *
 * - kafkajs crashed it and will not restart it (a crash with `restart: false`: a non-retriable
 *   error such as a TypeError in the commit path), unless the error is about permissions (SASL
 *   authentication, ACLs): a restart does not fix a configuration, and the HTTP role would flap
 *   for nothing; `kafka_consumer_ready` 0 and its alert report those; or
 * - it completed nothing with the broker (no join, fetch, heartbeat or finished batch; an idle
 *   consumer completes an empty fetch every few seconds and a long batch heartbeats) for
 *   `stallMs`, counted from the last time the broker did not answer, and the broker answers now.
 *
 * Whether the broker answers is asked only when some consumer has been quiet for a quarter of the
 * stall time (at most 30 s): a metadata request from a separate admin client, bounded by a timeout,
 * one at a time. Each unanswered probe restarts the stall clock, so a consumer gets the full stall
 * time to recover after an outage (kafkajs' own retries can take tens of seconds to notice).
 */
export class ConsumerWatchdog {
  private brokerDownAt = 0;
  private wedged_: WedgedConsumer[] = [];
  private admin: Admin | undefined;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;

  constructor(
    private readonly opts: {
      bus: KafkaBus;
      log: Logger;
      consumers: () => ReadonlyMap<string, ConsumerHandle>;
      stallMs?: number;
      everyMs?: number;
      probeTimeoutMs?: number;
      /** Called after every check with the groups found wedged (for the gauge). */
      onCheck?: (wedged: readonly WedgedConsumer[]) => void;
    },
  ) {}

  private get stallMs(): number {
    return this.opts.stallMs ?? CONSUMER_STALL_MS;
  }

  /** The consumers found wedged by the last check (empty: live). */
  wedged(): readonly WedgedConsumer[] {
    return this.wedged_;
  }

  start(): void {
    this.timer = setInterval(() => void this.check(), this.opts.everyMs ?? CONSUMER_WATCH_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.checking;
    await this.admin?.disconnect().catch(() => undefined);
    this.admin = undefined;
  }

  /** One look at every consumer (at most one at a time). */
  check(): Promise<void> {
    this.checking ??= this.look().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  private async look(): Promise<void> {
    const consumers = [...this.opts.consumers()].map(([group, handle]) => ({ group, ...handle.liveness() }));
    const quietest = Math.min(Date.now(), ...consumers.map((c) => c.progressAt));
    if (Date.now() - quietest > Math.min(this.stallMs / 4, 30_000) && !(await this.brokerAnswers())) this.brokerDownAt = Date.now();
    const now = Date.now();
    const wedged: WedgedConsumer[] = [];
    for (const c of consumers) {
      if (c.gaveUp && !c.gaveUp.permissions) {
        wedged.push({
          group: c.group,
          reason: 'gave_up',
          detail: `kafkajs crashed the consumer and does not restart it (${c.gaveUp.error})`,
        });
      } else if (!c.gaveUp && now - Math.max(c.progressAt, this.brokerDownAt) > this.stallMs) {
        wedged.push({
          group: c.group,
          reason: 'stalled',
          detail: `no fetch or heartbeat for ${Math.round((now - c.progressAt) / 1000)} s while the broker answers`,
        });
      }
    }
    for (const w of wedged) {
      if (!this.wedged_.some((p) => p.group === w.group))
        this.opts.log.error({ group: w.group, reason: w.reason }, `kafka consumer wedged: ${w.detail}; liveness fails`);
    }
    this.wedged_ = wedged;
    this.opts.onCheck?.(wedged);
  }

  /** A metadata request answered within the timeout; false also for a client that cannot connect. */
  private async brokerAnswers(): Promise<boolean> {
    try {
      this.admin ??= this.opts.bus.kafka.admin({ retry: { retries: 0 } });
      const admin = this.admin;
      const asked = (async () => {
        await admin.connect();
        await admin.describeCluster();
      })();
      asked.catch(() => undefined);
      const timeout = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('broker probe timed out')), this.opts.probeTimeoutMs ?? 5_000).unref(),
      );
      await Promise.race([asked, timeout]);
      return true;
    } catch (err) {
      this.opts.log.debug({ err }, 'kafka consumer watchdog: the broker does not answer');
      // A fresh client next time: a connection left half-open by the timeout must not answer for it.
      const admin = this.admin;
      this.admin = undefined;
      await admin?.disconnect().catch(() => undefined);
      return false;
    }
  }
}

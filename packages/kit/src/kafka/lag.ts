// The consumer lag metric, read from the broker at scrape time.
import type { Admin } from 'kafkajs';
import { Gauge } from 'prom-client';
import { TOPICS, type TopicKey } from '@wdr/contracts';
import type { Logger } from '../log.js';
import { SHARED_PREFIX, type ServiceMetrics } from '../metrics.js';
import type { KafkaBus } from './bus.js';

/** The bound of one lag query, connect included (a scrape times out at 10 s; several groups run in parallel). */
export const LAG_QUERY_TIMEOUT_MS = 2_000;

class LagTimeout extends Error {
  constructor() {
    super(`lag query took longer than ${LAG_QUERY_TIMEOUT_MS} ms`);
  }
}

type LagRows = { group: string; topic: string; partition: string; lag: number }[];
/** The group's rows, or undefined when the broker did not answer within the bound. */
type LagSource = () => Promise<LagRows | undefined>;

/**
 * `wdr_kafka_lag_query_success` (one name for the fleet, `wdr_service` tells the services apart):
 * 1 when every lag query of this scrape answered, 0 when one failed or timed out. 0 on every service
 * of a namespace is Kafka unreachable (WdrKafkaUnreachable), seen even while the lag series are gone.
 */
export const LAG_QUERY_SUCCESS_METRIC = 'wdr_kafka_lag_query_success';
const lagSources = new WeakMap<ServiceMetrics, Set<LagSource>>();

/**
 * `wdr_kafka_consumer_lag{group, topic, partition}`: the partition's high watermark minus the
 * group's committed offset, asked from the broker at scrape time (two admin requests per group,
 * LAG_QUERY_TIMEOUT_MS at most, connecting included; nothing when the broker does not answer). Asked from the broker rather than taken
 * from fetched batches, so a consumer stuck on a message still shows the backlog growing behind
 * it. Every replica reports the whole group: aggregate with max.
 */
export function exportLag(
  metrics: ServiceMetrics,
  bus: KafkaBus,
  group: string,
  topics: readonly TopicKey[],
  log: Logger,
): () => Promise<void> {
  let sources = lagSources.get(metrics);
  if (!sources) {
    const all = new Set<LagSource>();
    sources = all;
    lagSources.set(metrics, all);
    const name = `${SHARED_PREFIX}_kafka_consumer_lag`;
    metrics.registry.removeSingleMetric(name);
    metrics.registry.removeSingleMetric(LAG_QUERY_SUCCESS_METRIC);
    // prom-client collects the metrics of one scrape in parallel: both gauges share one round of queries.
    let round: Promise<(LagRows | undefined)[]> | undefined;
    const query = () =>
      (round ??= Promise.all([...all].map((source) => source())).finally(() => {
        round = undefined;
      }));
    new Gauge({
      name,
      help: 'Messages behind the partition high watermark (committed offset of the group), by group, topic and partition; read from the broker at scrape time.',
      labelNames: ['group', 'topic', 'partition'] as const,
      registers: [metrics.registry],
      async collect() {
        const results = await query();
        this.reset();
        for (const rows of results) for (const { lag, ...labels } of rows ?? []) this.set(labels, lag);
      },
    });
    new Gauge({
      name: LAG_QUERY_SUCCESS_METRIC,
      help: 'Whether every consumer-lag query of this scrape answered within its bound (1) or not (0: Kafka unreachable or too slow from this pod).',
      registers: [metrics.registry],
      async collect() {
        const results = await query();
        this.set(results.every((r) => r !== undefined) ? 1 : 0);
      },
    });
  }
  let admin: Admin | undefined;
  // One connect in flight at a time, shared by the scrapes that wait for it; cleared when it fails.
  let connecting: Promise<void> | undefined;
  const connect = (): Promise<void> => {
    admin ??= bus.kafka.admin();
    connecting ??= admin.connect().catch((err: unknown) => {
      connecting = undefined;
      throw err;
    });
    return connecting;
  };
  const source: LagSource = async () => {
    let timer: NodeJS.Timeout | undefined;
    try {
      // The whole query, connect included, is bounded: with the broker gone kafkajs takes ~24 s to
      // give up connecting, past any scrape timeout, and /metrics must answer without the lag.
      const work = (async () => {
        await connect();
        const groupId = `${bus.prefix}${group}`;
        const committed = await admin!.fetchOffsets({ groupId, topics: topics.map((t) => bus.topic(t)) });
        const rows: LagRows = [];
        for (const t of committed) {
          const key = bus.keyOf(t.topic);
          if (!key) continue;
          const ends = await admin!.fetchTopicOffsets(t.topic);
          for (const end of ends) {
            const done = t.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
            const from = BigInt(done) < 0n ? BigInt(end.low) : BigInt(done);
            rows.push({
              group,
              topic: TOPICS[key].name,
              partition: String(end.partition),
              lag: Math.max(0, Number(BigInt(end.high) - from)),
            });
          }
        }
        return rows;
      })();
      // A late failure after the bound is expected (the broker is gone): never an unhandled rejection.
      work.catch(() => undefined);
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new LagTimeout()), LAG_QUERY_TIMEOUT_MS);
        timer.unref();
      });
      return await Promise.race([work, timeout]);
    } catch (err) {
      log.debug({ err, group }, 'consumer lag for metrics unavailable');
      // A timed-out connect stays in flight (the next scrape waits on it, bounded again); any other
      // failure starts over with a fresh connect.
      if (!(err instanceof LagTimeout)) connecting = undefined;
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  };
  sources.add(source);
  return async () => {
    sources.delete(source);
    await admin?.disconnect().catch(() => undefined);
  };
}

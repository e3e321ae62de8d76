// The consumer lag metric, read from the broker at scrape time.
import type { Admin } from 'kafkajs';
import { Gauge } from 'prom-client';
import { TOPICS, type TopicKey } from '@wdr/contracts';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics.js';
import type { KafkaBus } from './bus.js';

type LagSource = () => Promise<{ group: string; topic: string; partition: string; lag: number }[]>;
const lagSources = new WeakMap<ServiceMetrics, Set<LagSource>>();

/**
 * `<prefix>_kafka_consumer_lag{group, topic, partition}`: the partition's high watermark minus the
 * group's committed offset, asked from the broker at scrape time (two admin requests per group,
 * 2 s at most; nothing when the broker does not answer). Asked from the broker rather than taken
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
    const name = `${metrics.prefix}_kafka_consumer_lag`;
    metrics.registry.removeSingleMetric(name);
    new Gauge({
      name,
      help: 'Messages behind the partition high watermark (committed offset of the group), by group, topic and partition; read from the broker at scrape time.',
      labelNames: ['group', 'topic', 'partition'] as const,
      registers: [metrics.registry],
      async collect() {
        const results = await Promise.all([...all].map((source) => source()));
        this.reset();
        for (const rows of results) for (const { lag, ...labels } of rows) this.set(labels, lag);
      },
    });
  }
  let admin: Admin | undefined;
  let connecting: Promise<void> | undefined;
  const source: LagSource = async () => {
    try {
      admin ??= bus.kafka.admin();
      await (connecting ??= admin.connect());
      const work = (async () => {
        const groupId = `${bus.prefix}${group}`;
        const committed = await admin!.fetchOffsets({ groupId, topics: topics.map((t) => bus.topic(t)) });
        const rows: Awaited<ReturnType<LagSource>> = [];
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
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('lag query timed out')), 2_000).unref());
      return await Promise.race([work, timeout]);
    } catch (err) {
      log.debug({ err, group }, 'consumer lag for metrics unavailable');
      connecting = undefined;
      return [];
    }
  };
  sources.add(source);
  return async () => {
    sources.delete(source);
    await admin?.disconnect().catch(() => undefined);
  };
}

import { createKafkaService, kafkaServiceDeps, type KafkaServiceDeps } from '@wdr/kit/kafka';
import type { DispatcherEnv } from './env.js';
import { PrismaClient, type Prisma } from './generated/prisma/client.js';

export type DispatcherDeps = KafkaServiceDeps<DispatcherEnv, PrismaClient>;

export function createDispatcherDeps(env: DispatcherEnv): DispatcherDeps {
  return kafkaServiceDeps('webhook-dispatcher', env, (options) => new PrismaClient(options));
}

/**
 * Part of the fleet from day one: it boots, migrates, joins its consumer group and reports health.
 * Its event handlers arrive with its features; until then events are consumed, recorded and
 * counted as `ignored` (see webhook_dispatcher_kafka_messages_total).
 */
export function createDispatcherService(deps: DispatcherDeps) {
  return createKafkaService<Prisma.TransactionClient>({
    deps,
    consumers: [{ group: 'webhook-dispatcher', topics: ['requestLifecycle', 'billingEvents'], handlers: {} }],
  });
}

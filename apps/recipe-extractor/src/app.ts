import { createKafkaService, kafkaServiceDeps, type KafkaServiceDeps } from '@wdr/kit/kafka';
import type { ExtractorEnv } from './env.js';
import { PrismaClient, type Prisma } from './generated/prisma/client.js';

export type ExtractorDeps = KafkaServiceDeps<ExtractorEnv, PrismaClient>;

export function createExtractorDeps(env: ExtractorEnv): ExtractorDeps {
  return kafkaServiceDeps('recipe-extractor', env, (options) => new PrismaClient(options));
}

/**
 * Part of the fleet from day one: it boots, migrates, joins its consumer group and reports health.
 * Its event handlers arrive with its features; until then events are consumed, recorded and
 * counted as `ignored` (see recipe_extractor_kafka_messages_total).
 */
export function createExtractorService(deps: ExtractorDeps) {
  return createKafkaService<Prisma.TransactionClient>({
    deps,
    consumers: [{ group: 'recipe-extractor', topics: ['extractionJobs'], handlers: {} }],
  });
}

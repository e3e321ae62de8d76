import { access, constants } from 'node:fs/promises';
import { createKafkaService, kafkaServiceDeps, type KafkaServiceDeps } from '@wdr/kit/kafka';
import type { RendererEnv } from './env.js';
import { PrismaClient, type Prisma } from './generated/prisma/client.js';

export type RendererDeps = KafkaServiceDeps<RendererEnv, PrismaClient>;

export function createRendererDeps(env: RendererEnv): RendererDeps {
  return kafkaServiceDeps('browser-renderer', env, (options) => new PrismaClient(options));
}

/**
 * Part of the fleet from day one: it boots, migrates, joins its consumer group and reports health.
 * Its event handlers arrive with its features; until then events are consumed, recorded and
 * counted as `ignored` (see browser_renderer_kafka_messages_total).
 */
export function createRendererService(deps: RendererDeps) {
  return createKafkaService<Prisma.TransactionClient>({
    deps,
    consumers: [{ group: 'browser-renderer', topics: ['renderJobs'], handlers: {} }],
    // The browser binary must be there before this service can take render jobs.
    readiness: [{ name: 'chromium', check: () => access(deps.env.CHROMIUM_PATH, constants.X_OK).then(() => true) }],
  });
}

export { KafkaBus, type OutgoingMessage } from './bus.js';
export { applyKafkajsIdleLoopFix } from './kafkajs-idle-fix.js';
export { makeEnvelope } from './envelope.js';
export { enqueue, enqueueMany, outboxJson, OutboxRelay } from './outbox.js';
export {
  startBroadcastConsumer,
  startConsumer,
  PoisonMessageError,
  SKIPPED,
  type BatchContext,
  type BatchHandler,
  type ConsumerHandle,
  type EventBatchHandlers,
  type EventHandler,
  type EventHandlers,
  type HandlerContext,
  type HandlerOutcome,
} from './consumer.js';
export {
  createKafkaService,
  kafkaServiceDeps,
  type ConsumerSpec,
  type KafkaServiceDeps,
  type KafkaServiceEnv,
  type KafkaServiceParts,
} from './kafka-service.js';
export { purgeProcessed } from './processed-retention.js';

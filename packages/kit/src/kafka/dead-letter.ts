// Dead-lettering: a message that cannot be processed is parked on its topic's `.dlq` twin, with why and where from.
import type { KafkaMessage } from 'kafkajs';
import type { TopicKey } from '@wdr/contracts';
import type { KafkaBus } from './bus.js';
import { safeEnvelope } from './transport.js';

/** Sends a message of `topic` to its DLQ with the reason, its source (topic, partition, offset), the attempts made and the consumer. */
export type DeadLetter = (topic: TopicKey, message: KafkaMessage, partition: number, reason: string, attempts: number) => Promise<void>;

export function deadLetterer(bus: KafkaBus, group: string): DeadLetter {
  return async (topic, message, partition, reason, attempts) => {
    await bus.send(bus.dlq(topic), [
      {
        key: message.key?.toString() ?? '',
        envelope: safeEnvelope(message),
        headers: {
          'dlq-reason': reason.slice(0, 500),
          'dlq-source-topic': bus.topic(topic),
          'dlq-source-partition': String(partition),
          'dlq-source-offset': message.offset,
          'dlq-attempts': String(attempts),
          'dlq-consumer': group,
        },
      },
    ]);
  };
}

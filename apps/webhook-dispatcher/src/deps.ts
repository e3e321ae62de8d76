import { kafkaServiceDeps, type KafkaServiceDeps } from '@wdr/kit/kafka';
import { Sealer } from '@wdr/kit/sealing';
import { TargetPolicy } from '@wdr/kit/target-policy';
import type { DispatcherEnv } from './env.js';
import { PrismaClient } from './generated/prisma/client.js';

export interface DispatcherDeps extends KafkaServiceDeps<DispatcherEnv, PrismaClient> {
  /** Seals endpoint URLs and signing secrets (AES-256-GCM, WEBHOOK_SECRET_KEY). */
  sealer: Sealer;
  /** The SSRF rules for endpoint URLs: at creation and at every connection. */
  policy: TargetPolicy;
}

export function createDispatcherDeps(env: DispatcherEnv): DispatcherDeps {
  return {
    ...kafkaServiceDeps('webhook-dispatcher', env, (options) => new PrismaClient(options)),
    sealer: Sealer.fromBase64(env.WEBHOOK_SECRET_KEY),
    policy: new TargetPolicy(env.TARGET_ALLOWLIST),
  };
}

/** Associated data of an endpoint's sealed values: a sealed secret cannot be moved to another endpoint or field. */
export const sealedUrlAad = (endpointId: string) => `webhook-endpoint:${endpointId}:url`;
export const sealedSecretAad = (endpointId: string) => `webhook-endpoint:${endpointId}:secret`;

import { createServiceClient } from '@wdr/kit/http-client';
import { kafkaServiceDeps, type KafkaServiceDeps } from '@wdr/kit/kafka';
import { PgSql } from '@wdr/kit/pg-sql';
import { Sealer } from '@wdr/kit/sealing';
import { TargetPolicy } from '@wdr/kit/target-policy';
import type { DispatcherEnv } from './env.js';
import { PrismaClient } from './generated/prisma/client.js';
import { LifecycleRegistration } from './domain/lifecycle-registration.js';
import { Subscribers } from './domain/subscribers.js';

export interface DispatcherDeps extends KafkaServiceDeps<DispatcherEnv, PrismaClient> {
  /** Seals endpoint URLs and signing secrets (AES-256-GCM, WEBHOOK_SECRET_KEY; opens with WEBHOOK_SECRET_KEY_PREVIOUS too). */
  sealer: Sealer;
  /** The SSRF rules for endpoint URLs: at creation and at every connection. */
  policy: TargetPolicy;
  /** The tenants with an enabled endpoint: the fan-out skips the others' events. */
  subscribers: Subscribers;
  /** The tenants with endpoints, registered at the orchestrator as listeners of their request lifecycle. */
  lifecycle: LifecycleRegistration;
  /**
   * The per-delivery statements (fan-out, claim, record) on node-postgres (kit/pg-sql.ts); the rest
   * on Prisma (`db`). Planned at each execution: the queue grows from nothing to tens of thousands
   * of rows in a burst, and a plan kept from while it was empty read every pending message at each
   * record (bench/README.md, "plans Postgres kept from empty tables"). And planned for index walks
   * (`indexPlans`): in a burst the statistics say nothing is pending, and the fresh plans then read
   * and sorted every pending message to claim a few (claim-plan.test.ts).
   */
  sql: PgSql;
}

export function createDispatcherDeps(env: DispatcherEnv): DispatcherDeps {
  const base = kafkaServiceDeps('webhook-dispatcher', env, (options) => new PrismaClient(options));
  return {
    ...base,
    sealer: Sealer.fromKeys(env.WEBHOOK_SECRET_KEY, env.WEBHOOK_SECRET_KEY_PREVIOUS, 'WEBHOOK_SECRET_KEY'),
    policy: new TargetPolicy(env.TARGET_ALLOWLIST),
    sql: new PgSql(env.DATABASE_URL, {
      max: 4,
      idleTimeoutMillis: 30_000,
      customPlans: true,
      indexPlans: true,
      onError: (err) => base.log.warn({ err }, 'a delivery connection broke'),
    }),
    subscribers: new Subscribers(base.db, env.DATABASE_URL, base.log),
    lifecycle: new LifecycleRegistration(
      base.db,
      env.ORCHESTRATOR_URL === undefined
        ? undefined
        : createServiceClient({
            name: 'fetch-orchestrator',
            baseUrl: env.ORCHESTRATOR_URL,
            timeoutMs: 15_000,
            metrics: base.metrics,
            identity: base.identity.signer,
          }),
      base.log,
    ),
  };
}

/** Associated data of an endpoint's sealed values: a sealed secret cannot be moved to another endpoint or field. */
export const sealedUrlAad = (endpointId: string) => `webhook-endpoint:${endpointId}:url`;
export const sealedSecretAad = (endpointId: string) => `webhook-endpoint:${endpointId}:secret`;

import { createKafkaService } from '@wdr/kit/kafka';
import type { Prisma } from './generated/prisma/client.js';
import { internalRoutes } from './api/internal-routes.js';
import type { DispatcherDeps } from './deps.js';
import { readBacklog } from './domain/backlog.js';
import { FanOut } from './domain/fan-out.js';
import { purgeEndpointOperations } from './domain/operations.js';
import { purgeFinishedMessages } from './domain/retention.js';
import { DeliverySender } from './domain/sender.js';
import { onBalanceAlert } from './kafka/balance-alert.js';
import { onBatchCompleted } from './kafka/batch-completed.js';
import { onRequestEventAppended } from './kafka/request-event-appended.js';

export { createDispatcherDeps, type DispatcherDeps } from './deps.js';

/**
 * Consumers turn events into messages (fan-out); the sender posts a new message of a free endpoint
 * straight from the consumer's hand and stores it once answered (direct.ts), and delivers everything
 * else from the durable queue in the database. A consumer waits on a receiver for at most
 * WEBHOOK_DIRECT_WAIT_MS per message before that message is in the queue.
 */
export function createDispatcherService(deps: DispatcherDeps) {
  const sender = new DeliverySender(deps);
  const fanOut = new FanOut(deps.sql, deps.env.WEBHOOK_DIRECT_WAIT_MS > 0 ? sender : undefined);
  const purged = deps.metrics.counter(
    'webhook_messages_purged_total',
    'Finished webhook messages (with their attempts) deleted past WEBHOOK_RETENTION_HOURS.',
    [],
  );
  let purgeTimer: NodeJS.Timeout | undefined;
  const purge = () =>
    purgeFinishedMessages(deps.db, new Date(Date.now() - deps.env.WEBHOOK_RETENTION_HOURS * 3_600_000))
      .then((n) => purged.inc(n))
      .catch((err: unknown) => deps.log.warn({ err }, 'webhook message retention purge failed'));
  const operationsPurged = deps.metrics.counter(
    'endpoint_operations_purged_total',
    'Applied endpoint writes forgotten past IDEMPOTENCY_RETENTION_HOURS.',
    [],
  );
  let operationsTimer: NodeJS.Timeout | undefined;
  const purgeOperations = () =>
    purgeEndpointOperations(deps.db, new Date(Date.now() - deps.env.IDEMPOTENCY_RETENTION_HOURS * 3_600_000))
      .then((n) => operationsPurged.inc(n))
      .catch((err: unknown) => deps.log.warn({ err }, 'endpoint operation retention purge failed'));
  // The delivery backlog (WdrWebhookBacklogOld, the dashboard's webhook panel), refreshed every 15 s;
  // a slow or failing database keeps the previous values (bounded at 2 s, never piles up).
  const backlogMessages = deps.metrics.gauge(
    'webhook_messages_pending',
    "Pending webhook messages: due (the sender's queue) or scheduled (waiting for a retry).",
    ['state'] as const,
  );
  const oldestDue = deps.metrics.gauge(
    'webhook_oldest_due_age_seconds',
    'How long the longest-waiting due webhook message has been due; 0 when none is.',
    [] as const,
  );
  let backlogRunning = false;
  const refreshBacklog = async () => {
    if (backlogRunning) return;
    backlogRunning = true;
    try {
      const b = await Promise.race([
        readBacklog(deps.db),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2_000).unref()),
      ]);
      if (!b) return;
      backlogMessages.set({ state: 'due' }, b.due);
      backlogMessages.set({ state: 'scheduled' }, b.scheduled);
      oldestDue.set(b.oldestDueAgeSeconds);
    } catch (err: unknown) {
      deps.log.debug({ err }, 'webhook backlog for metrics unavailable');
    } finally {
      backlogRunning = false;
    }
  };
  let backlogTimer: NodeJS.Timeout | undefined;
  const service = createKafkaService<Prisma.TransactionClient>({
    deps,
    consumers: [
      {
        group: 'webhook-dispatcher',
        topics: ['requestLifecycle', 'billingAlerts'],
        handlers: {
          'request.event_appended': onRequestEventAppended({ fanOut, subscribers: deps.subscribers }),
          'batch.completed': onBatchCompleted({ fanOut, subscribers: deps.subscribers }),
          'billing.balance_low': onBalanceAlert({ subscribers: deps.subscribers }),
          'billing.balance_exhausted': onBalanceAlert({ subscribers: deps.subscribers }),
        },
        // The fan-out is idempotent by itself (one message per endpoint and event) and skipped
        // events have no effect: recording them as processed would only cost an insert each.
        recordUntransacted: false,
        // Events are independent (no order is promised between deliveries), so many are handled at
        // once and their fan-outs share a statement (FanOut); offsets still move only past events
        // whose messages are committed.
        inFlight: 64,
        // Webhooks tolerate 50 ms more latency; in exchange a busy fleet's events arrive in a few
        // large fetches instead of one fetch (and offset commit) per handful of messages.
        fetch: { minBytes: 64 * 1024, maxWaitMs: 50 },
        // Most lifecycle events concern nobody here (tenants without endpoints): a batch of nothing
        // but skipped events commits its offset within a few seconds, not at once (after a crash
        // they are read again and skipped again).
        lazySkipCommitMs: 5_000,
        // ... and are skipped from the message's tenant header, unparsed, when the tenant has no
        // endpoint at all (Subscribers fails closed: while it may be incomplete, nothing is skipped).
        skipTenant: (tenantId) => !deps.subscribers.mayReceiveAny(tenantId),
      },
    ],
    routes: () => internalRoutes(deps),
    readiness: [{ name: 'delivery_sender', check: () => sender.healthy() }],
    background: {
      start: () => {
        deps.subscribers.start();
        sender.start();
        void deps.lifecycle.sync();
        purgeTimer = setInterval(() => void purge(), 10 * 60_000);
        purgeTimer.unref();
        operationsTimer = setInterval(() => void purgeOperations(), 3_600_000);
        operationsTimer.unref();
        void refreshBacklog();
        backlogTimer = setInterval(() => void refreshBacklog(), 15_000);
        backlogTimer.unref();
      },
      stop: async () => {
        if (purgeTimer) clearInterval(purgeTimer);
        if (operationsTimer) clearInterval(operationsTimer);
        if (backlogTimer) clearInterval(backlogTimer);
        deps.lifecycle.stop();
        await sender.stop();
        await deps.subscribers.stop();
      },
    },
    // After the consumer stopped: its fan-outs in flight still write through these connections.
    close: () => deps.sql.end().catch(() => undefined),
  });
  return Object.assign(service, { sender });
}

import { enqueueMany } from '@wdr/kit/kafka';
import type { Logger } from '@wdr/kit/log';
import type { MetricFactory } from '@wdr/kit/metrics';
import type { PgSql } from '@wdr/kit/pg-sql';
import { Semaphore } from '@wdr/kit/semaphore';
import type { DataRequest } from '../generated/prisma/client.js';
import { TERMINAL } from './requests/terminal.js';
import { fetchJobOf } from './stages.js';

/**
 * HTTP stages run where they were admitted. An HTTP request admitted while this instance has a free
 * stage slot is not queued on `fetch.jobs` for itself to consume: the admission statement stores it
 * *claimed* (`claimed_until`, a short deadline) and without a job message, and the stage starts here
 * as soon as the statement committed. That saves the page the outbox row of its job, its relay
 * round, the Kafka hop, the consumer's processed-record check and record, and a read of the row.
 *
 * Nothing is lost to a crash: while a stage runs, its claim is renewed every `everyMs`; a claim that
 * ran out (the instance died, or stalled past it) is swept by any instance into a `fetch.job_requested`
 * job on the outbox, the path every other request takes, and the claim cleared. A stage that ends
 * (or hands over to the browser) clears its claim in the same statement. A request's moves are
 * guarded by its state, so a stage swept while still alive runs twice at worst and ends once.
 *
 * Admission outruns execution (a client's next submission comes as soon as the last is accepted),
 * so a short `backlog` is admitted claimed too and waits here for a slot; one that waited
 * `backlogWaitMs` without one (the slots held by slow targets) is handed to fetch.jobs then. When
 * the slots and the backlog are full (or the service is stopping) admission queues the job on
 * Kafka as before: Kafka stays the queue under load, this only takes the pages that would wait
 * for nobody, or for a moment.
 */
export interface LocalRunsOptions {
  /** Stages run at once from admission (0: none; every request queues its job). */
  slots: number;
  /** Admitted claimed beyond the slots, waiting here for one (default 0). */
  backlog?: number;
  /** How long a backlog entry waits for a slot before its job goes to fetch.jobs (default 1000). */
  backlogWaitMs?: number;
  /** How long a claim holds without renewal. */
  claimMs: number;
  /** How often claims are renewed and expired ones swept. */
  everyMs: number;
  /** How long `stop` waits for running stages before handing them back to the queue. */
  drainMs: number;
}

/** A slot taken for one admission: `run` once its row committed claimed, or `release` if it did not. */
export interface LocalClaim {
  /** The claim's length for the admission statement (`claimed_until = now() + seconds`). */
  seconds: number;
  run(row: DataRequest): void;
  release(): void;
}

export class LocalHttpRuns {
  /** Stages running here and backlog entries waiting for a slot, by request id (all of them claimed). */
  private readonly running = new Map<string, Promise<void>>();
  private readonly slots: Semaphore;
  private reserved = 0;
  private accepting = true;
  /** stop() handed what still waits back to fetch.jobs: a backlog entry given a slot after that does not run. */
  private handedBack = false;
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private readonly started: ((path: 'local' | 'queued') => void) | undefined;

  constructor(
    private readonly sql: PgSql,
    private readonly log: Logger,
    private readonly opts: LocalRunsOptions,
    private readonly stage: (row: DataRequest) => Promise<void>,
    metrics?: MetricFactory,
  ) {
    const counter = metrics?.counter(
      'http_stage_dispatch_total',
      'HTTP stages by path: run where admitted (local), or through fetch.jobs (queued: no local slot or backlog place at admission, or a backlog wait that ran out).',
      ['path'],
    );
    this.started = counter ? (path) => counter.inc({ path }) : undefined;
    this.slots = new Semaphore(Math.max(1, opts.slots));
  }

  /** A slot for one admission, or undefined (all taken, or stopping): its job then goes through Kafka. */
  claim(): LocalClaim | undefined {
    if (!this.accepting || this.opts.slots === 0 || this.running.size + this.reserved >= this.opts.slots + (this.opts.backlog ?? 0))
      return undefined;
    this.reserved++;
    let settled = false;
    const settle = () => {
      if (settled) return false;
      settled = true;
      this.reserved--;
      return true;
    };
    return {
      seconds: this.opts.claimMs / 1000,
      run: (row) => {
        if (settle()) this.launch(row);
      },
      release: () => {
        settle();
      },
    };
  }

  /** An HTTP request stored with its job queued on fetch.jobs (no slot was free), for the dispatch metric. */
  queued(): void {
    this.started?.('queued');
  }

  /** Stages running here now, and backlog entries waiting for a slot. */
  get size(): number {
    return this.running.size;
  }

  /** Renew and sweep every `everyMs` (the app's background work). */
  start(): void {
    this.timer = setInterval(() => void this.tick(), this.opts.everyMs);
    this.timer.unref();
  }

  /**
   * Take no more, let running stages finish for up to `drainMs`, then hand what still runs back to
   * the queue (its claim cleared and its job written), so another instance need not wait for the
   * claim to run out.
   */
  async stop(): Promise<void> {
    this.accepting = false;
    clearInterval(this.timer);
    await this.pass;
    const deadline = new Promise((resolve) => setTimeout(resolve, this.opts.drainMs).unref());
    await Promise.race([Promise.allSettled([...this.running.values()]), deadline]);
    const left = [...this.running.keys()];
    if (left.length === 0) return;
    this.handedBack = true;
    try {
      const n = await this.requeue(left);
      this.log.info({ requests: left.length, requeued: n }, 'local http stages still running at shutdown handed back to fetch.jobs');
    } catch (err) {
      this.log.warn({ err, requests: left.length }, 'could not hand back running stages; their claims run out and are swept');
    }
  }

  /** One renewal and sweep (the timer's; tests call it). */
  tick(): Promise<void> {
    this.pass ??= this.renewAndSweep()
      .catch((err: unknown) => this.log.warn({ err }, 'local http stage claims: renewal or sweep failed'))
      .finally(() => {
        this.pass = undefined;
      });
    return this.pass;
  }

  private launch(row: DataRequest): void {
    const run = this.runWhenSlotFree(row)
      .catch(async (err: unknown) => {
        // What a consumer would retry (a dependency down, a statement failed): the job goes to the
        // queue now; if that fails too, the claim runs out and the sweep queues it.
        this.log.warn({ err, requestId: row.id }, 'local http stage failed; handing it to fetch.jobs');
        await this.requeue([row.id]).catch(() => undefined);
      })
      .finally(() => {
        this.running.delete(row.id);
      });
    this.running.set(row.id, run);
  }

  /** The stage once a slot is free; a backlog entry that waited too long goes to fetch.jobs instead. */
  private async runWhenSlotFree(row: DataRequest): Promise<void> {
    if (!(await this.slots.acquireWithin(this.opts.backlogWaitMs ?? 1_000))) {
      this.started?.('queued');
      await this.requeue([row.id]);
      return;
    }
    try {
      if (this.handedBack) return;
      this.started?.('local');
      await this.stage(row);
    } finally {
      this.slots.release();
    }
  }

  private async renewAndSweep(): Promise<void> {
    const ids = [...this.running.keys()];
    if (ids.length > 0) {
      await this.sql.$executeRawUnsafe(
        `UPDATE data_requests SET claimed_until = now() + make_interval(secs => $2::float8)
          WHERE id = ANY($1::uuid[]) AND claimed_until IS NOT NULL`,
        ids,
        this.opts.claimMs / 1000,
      );
    }
    // Almost always nothing ran out: one indexed probe, no transaction.
    const due = await this.sql.$queryRawUnsafe<unknown[]>('SELECT 1 FROM data_requests WHERE claimed_until < now() LIMIT 1');
    if (due.length === 0) return;
    const swept = await this.requeue();
    if (swept > 0)
      this.log.warn({ requests: swept }, 'local http stage claims ran out (an instance died or stalled): their jobs queued on fetch.jobs');
  }

  /**
   * Clear claims, and queue a `fetch.job_requested` for each of their requests not yet ended, in
   * one transaction: the claims of `ids` (whether or not they ran out), or without `ids` every
   * claim that ran out (skipping rows another instance's sweep holds). Answers the jobs queued.
   */
  private requeue(ids?: string[]): Promise<number> {
    return this.sql.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<{ id: string; tenant_id: string; live: boolean }[]>(
        `WITH c AS (
           SELECT id FROM data_requests
            WHERE claimed_until IS NOT NULL AND ${ids ? 'id = ANY($2::uuid[])' : 'claimed_until < now()'}
            ORDER BY claimed_until LIMIT 1000 FOR UPDATE SKIP LOCKED
         )
         UPDATE data_requests d SET claimed_until = NULL FROM c WHERE d.id = c.id
         RETURNING d.id::text, d.tenant_id::text, d.status <> ALL($1::text[]) AS live`,
        [...TERMINAL],
        ...(ids ? [ids] : []),
      );
      const jobs = rows.filter((r) => r.live);
      if (jobs.length === 0) return 0;
      await enqueueMany(
        tx,
        jobs.map((r) => fetchJobOf({ id: r.id, tenantId: r.tenant_id })),
      );
      return jobs.length;
    });
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ADMIN_BATCH_FLAG, type AdminBatchReply, type AdminBatchRequest } from '@wdr/contracts';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export type AdminService = 'gateway' | 'billing-ledger' | 'fetch-orchestrator' | 'webhook-dispatcher';

/** What `adminCommand` needs of a fleet (a `Fleet` is one): its name and a service's environment. */
export interface AdminTarget {
  topicPrefix: string;
  envOf(service: AdminService): Record<string, string>;
}

interface Pending {
  resolve: (reply: AdminBatchReply) => void;
  reject: (err: Error) => void;
}

/**
 * One `admin.js --batch` process: requests go one per line, replies come back in order. It holds
 * no reference on the event loop while nothing is pending, and ends when its stdin closes (at
 * `close()`, or when the test process exits).
 */
export interface AdminBatch {
  run(request: AdminBatchRequest): Promise<AdminBatchReply>;
  close(boundMs?: number): Promise<void>;
}

/** Start a service's admin command line in batch mode, with `env` as its process environment. */
export function startAdminBatch(
  service: AdminService,
  env: Record<string, string | undefined> = process.env,
  onExit: () => void = () => undefined,
): AdminBatch {
  return new BatchProcess(service, env, onExit);
}

class BatchProcess implements AdminBatch {
  private readonly proc: ChildProcess;
  private readonly pending: Pending[] = [];
  private stderr = '';
  private exited = false;

  constructor(
    service: AdminService,
    env: Record<string, string | undefined>,
    private readonly onExit: () => void,
  ) {
    this.proc = spawn(process.execPath, [join(REPO, 'apps', service, 'dist', 'admin.js'), ADMIN_BATCH_FLAG], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    createInterface({ input: this.proc.stdout! }).on('line', (line) => {
      let reply: AdminBatchReply | undefined;
      try {
        const v = JSON.parse(line) as AdminBatchReply;
        if (typeof v.code === 'number') reply = v;
      } catch {
        // not a reply: a library's stray line; kept with stderr for a failure's message
      }
      if (!reply) {
        this.stderr = (this.stderr + line + '\n').slice(-4000);
        return;
      }
      this.pending.shift()?.resolve(reply);
      this.idle();
    });
    this.proc.stderr!.on('data', (b: Buffer) => (this.stderr = (this.stderr + b.toString()).slice(-4000)));
    this.proc.on('exit', (code, signal) => {
      this.exited = true;
      this.onExit();
      const err = new Error(`admin --batch exited (${code ?? signal}): ${this.stderr}`);
      for (const p of this.pending.splice(0)) p.reject(err);
    });
    this.proc.stdin!.on('error', () => undefined); // a write after its exit: the exit handler answers
    this.idle();
  }

  run(request: AdminBatchRequest): Promise<AdminBatchReply> {
    if (this.exited) return Promise.reject(new Error(`admin --batch has exited: ${this.stderr}`));
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.busy();
      this.proc.stdin!.write(`${JSON.stringify(request)}\n`);
    });
  }

  /** End its input and wait for it to exit: SIGKILL after `boundMs` (a fleet's stop is not held up). */
  async close(boundMs = 5_000): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.proc.stdin!.end();
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), boundMs);
    await gone;
    clearTimeout(timer);
  }

  /** Its pipes are sockets: while a reply is awaited they (and the child) hold the event loop open. */
  private busy(): void {
    this.proc.ref();
    (this.proc.stdout as Socket).ref();
  }

  private idle(): void {
    if (this.pending.length > 0) return;
    this.proc.unref();
    for (const pipe of [this.proc.stdin, this.proc.stdout, this.proc.stderr]) (pipe as Socket).unref();
  }
}

/** The batch processes of this test process, per fleet (its topic prefix names it) and service. */
const batches = new Map<string, AdminBatch>();

/**
 * Run a service's admin command (the gateway's by default) with the fleet's configuration, as an
 * operator would, and return the JSON it printed last; a non-zero exit rejects with its stderr.
 * The commands of one fleet and service go through one `admin.js --batch` process (the same code
 * and texts as a single run; the CLI's own tests run it once per command), so a test pays for one
 * process start per fleet, not one per command.
 */
export async function adminCommand(
  fleet: AdminTarget,
  args: string[],
  service: AdminService = 'gateway',
  extraEnv: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const key = `${fleet.topicPrefix}:${service}`;
  let batch = batches.get(key);
  if (!batch) {
    const made: AdminBatch = startAdminBatch(service, process.env, () => batches.get(key) === made && batches.delete(key));
    batches.set(key, made);
    batch = made;
  }
  const reply = await batch.run({ args, env: { ...fleet.envOf(service), ...extraEnv } });
  if (reply.code !== 0) throw new Error(`admin ${args.join(' ')} failed (${reply.code}): ${reply.stderr}`);
  return JSON.parse(reply.stdout.trim().split('\n').pop() || '{}') as Record<string, unknown>;
}

/** End the admin processes of a fleet (before its databases are dropped). */
export async function closeAdminCommands(topicPrefix: string): Promise<void> {
  const mine = [...batches.entries()].filter(([k]) => k.startsWith(`${topicPrefix}:`));
  for (const [k] of mine) batches.delete(k);
  await Promise.all(mine.map(([, b]) => b.close()));
}

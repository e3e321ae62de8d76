import { createInterface } from 'node:readline';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ADMIN_BATCH_FLAG, type AdminBatchReply, type AdminBatchRequest } from '@wdr/contracts';

/**
 * What every operator command line (apps/<service>/src/admin.ts, kit's identity-keys) shares, so
 * none of them prints a stack trace for an operator's mistake: `--help`/`-h` (or `help`) prints the
 * usage on stdout and exits 0; a bad option or an unknown command prints the problem and the usage
 * on stderr and exits 2; a missing or invalid environment variable prints one line naming it and
 * exits 2.
 *
 * A command is a function of its arguments and a `CommandIo` (environment, stdout, stderr, kept
 * database clients) returning its exit code, run by `runCommand`: once, from the process's arguments, or
 * (`--batch`) once per line of standard input, so a caller with many commands to run (the test
 * kit's `adminCommand`) starts one process, not one per command. Both modes run the same code and
 * print the same texts.
 */
export const EXIT_USAGE = 2;

interface Disconnectable {
  $disconnect(): Promise<void>;
}

export interface CommandIo {
  readonly env: Record<string, string | undefined>;
  out(text: string): void;
  err(text: string): void;
  /**
   * The command's database client for `url`, made by `make` once per URL and process (the commands
   * of a batch share it) and disconnected when the process is done with commands.
   */
  database<T extends Disconnectable>(url: string, make: () => T): T;
}

/** Ends a command with an exit code, its output already written (usage, help, environment). */
export class CommandExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

export type Command = (args: string[], io: CommandIo) => Promise<number | void>;

type Options = NonNullable<ParseArgsConfig['options']>;

export function parseCommandLine<O extends Options>(usage: string, commands: readonly string[], options: O, args: string[], io: CommandIo) {
  const all = { ...options, help: { type: 'boolean', short: 'h' } } as O & { help: { type: 'boolean'; short: 'h' } };
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: all, strict: true });
  } catch (err) {
    if (args.includes('--help') || args.includes('-h')) return help(usage, io);
    return usageError(usage, err instanceof Error ? err.message : String(err), io);
  }
  const command = parsed.positionals[0];
  if ((parsed.values as Record<string, unknown>)['help'] === true || command === 'help') return help(usage, io);
  if (command === undefined) return usageError(usage, 'a command is required', io);
  if (!commands.includes(command)) return usageError(usage, `unknown command: ${command}`, io);
  return { command, positionals: parsed.positionals.slice(1), values: parsed.values };
}

function help(usage: string, io: CommandIo): never {
  io.out(usage);
  throw new CommandExit(0);
}

/** The problem, then the usage, on stderr; exit 2. */
export function usageError(usage: string, problem: string, io: CommandIo): never {
  io.err(`${problem}\n${usage}`);
  throw new CommandExit(EXIT_USAGE);
}

/**
 * Read the command's environment with `load` (a loadEnv call over `io.env`); a problem is one line
 * on stderr naming each variable (not set, or invalid and why), exit 2, no stack trace.
 */
export function commandEnv<T>(load: () => T, io: CommandIo): T {
  try {
    return load();
  } catch (err) {
    const lines = (err instanceof Error ? err.message : String(err))
      .split('\n')
      .slice(1)
      .map((l) => l.trim())
      .filter(Boolean);
    const named = lines.map((l) => {
      const [name = '', ...rest] = l.split(': ');
      return io.env[name] === undefined ? `${name} is not set` : `${name} is invalid (${rest.join(': ')})`;
    });
    io.err(`environment: ${named.length > 0 ? named.join('; ') : err instanceof Error ? err.message : String(err)}`);
    throw new CommandExit(EXIT_USAGE);
  }
}

/** The database clients of one process, by URL. */
class Databases {
  private readonly clients = new Map<string, Disconnectable>();

  get<T extends Disconnectable>(url: string, make: () => T): T {
    let client = this.clients.get(url);
    if (!client) this.clients.set(url, (client = make()));
    return client as T;
  }

  async disconnectAll(): Promise<void> {
    const all = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(all.map((c) => c.$disconnect().catch(() => undefined)));
  }
}

function commandIo(env: CommandIo['env'], out: (t: string) => void, err: (t: string) => void, databases: Databases): CommandIo {
  return { env, out, err, database: (url, make) => databases.get(url, make) };
}

async function runOnce(command: Command, args: string[], io: CommandIo): Promise<number> {
  try {
    return (await command(args, io)) ?? 0;
  } catch (err) {
    if (err instanceof CommandExit) return err.code;
    io.err(`failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

function batchRequest(line: string): AdminBatchRequest | string {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return 'a batch line must be JSON: {"args": [...], "env": {...}}';
  }
  const r = v as Partial<AdminBatchRequest> | null;
  if (r === null || typeof r !== 'object' || !Array.isArray(r.args) || !r.args.every((a) => typeof a === 'string'))
    return 'a batch line needs "args", an array of strings';
  if (r.env !== undefined && (typeof r.env !== 'object' || r.env === null || !Object.values(r.env).every((x) => typeof x === 'string')))
    return '"env" must map names to strings';
  return { args: r.args, ...(r.env ? { env: r.env } : {}) };
}

/**
 * Run `command` as the process's entry point: once with the process's arguments (its exit code is
 * the process's), or with `--batch` once per JSON line of stdin (`AdminBatchRequest`), one `AdminBatchReply`
 * line each on stdout, in order, until stdin ends; the database clients then disconnect.
 */
export async function runCommand(command: Command): Promise<void> {
  const databases = new Databases();
  const args = process.argv.slice(2);
  if (args[0] !== ADMIN_BATCH_FLAG) {
    const io = commandIo(
      process.env,
      (t) => console.log(t),
      (t) => console.error(t),
      databases,
    );
    const code = await runOnce(command, args, io);
    await databases.disconnectAll();
    process.exitCode = code;
    return;
  }
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (line.trim() === '') continue;
    const request = batchRequest(line);
    const out: string[] = [];
    const err: string[] = [];
    let code: number;
    if (typeof request === 'string') {
      err.push(request);
      code = EXIT_USAGE;
    } else {
      const io = commandIo(
        { ...process.env, ...request.env },
        (t) => out.push(t),
        (t) => err.push(t),
        databases,
      );
      code = await runOnce(command, request.args, io);
    }
    const reply: AdminBatchReply = { code, stdout: out.join('\n'), stderr: err.join('\n') };
    process.stdout.write(`${JSON.stringify(reply)}\n`);
  }
  await databases.disconnectAll();
}

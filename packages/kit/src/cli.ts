import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * What every operator command line (apps/<service>/src/admin.ts) shares, so none of them prints a
 * stack trace for an operator's mistake: `--help`/`-h` (or `help`) prints the usage on stdout and
 * exits 0; a bad option or an unknown command prints the problem and the usage on stderr and exits
 * 2; a missing or invalid environment variable prints one line naming it and exits 2.
 */
export const EXIT_USAGE = 2;

type Options = NonNullable<ParseArgsConfig['options']>;

export function parseCommandLine<O extends Options>(
  usage: string,
  commands: readonly string[],
  options: O,
  args: string[] = process.argv.slice(2),
) {
  const all = { ...options, help: { type: 'boolean', short: 'h' } } as O & { help: { type: 'boolean'; short: 'h' } };
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: all, strict: true });
  } catch (err) {
    if (args.includes('--help') || args.includes('-h')) return help(usage);
    return usageError(usage, err instanceof Error ? err.message : String(err));
  }
  const command = parsed.positionals[0];
  if ((parsed.values as Record<string, unknown>)['help'] === true || command === 'help') return help(usage);
  if (command === undefined) return usageError(usage, 'a command is required');
  if (!commands.includes(command)) return usageError(usage, `unknown command: ${command}`);
  return { command, positionals: parsed.positionals.slice(1), values: parsed.values };
}

function help(usage: string): never {
  console.log(usage);
  process.exit(0);
}

function usageError(usage: string, problem: string): never {
  console.error(`${problem}\n${usage}`);
  process.exit(EXIT_USAGE);
}

/**
 * Read the command's environment with `load` (a loadEnv call); a problem is one line on stderr
 * naming each variable (not set, or invalid and why), exit 2, no stack trace.
 */
export function commandEnv<T>(load: () => T, source: Record<string, string | undefined> = process.env): T {
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
      return source[name] === undefined ? `${name} is not set` : `${name} is invalid (${rest.join(': ')})`;
    });
    console.error(`environment: ${named.length > 0 ? named.join('; ') : err instanceof Error ? err.message : String(err)}`);
    process.exit(EXIT_USAGE);
  }
}

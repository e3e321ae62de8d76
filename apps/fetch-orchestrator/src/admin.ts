import { z } from 'zod';
import { commandEnv, parseCommandLine, runCommand, type CommandIo } from '@wdr/kit/cli';
import { databaseEnv, loadEnv } from '@wdr/kit/config';
import { prismaClientOptions } from '@wdr/kit/db';
import { Sealer } from '@wdr/kit/sealing';
import { PrismaClient } from './generated/prisma/client.js';
import { addExit, ExitConfigError, listExits, removeExit, setExitEnabled } from './domain/proxies/exits.js';
import { retentionPass } from './domain/retention.js';
import { orchestratorEnv } from './env.js';

/**
 * Operator commands: `purge-expired` runs the retention pass now; the rest manage the proxy networks (`./dev admin proxy-…`). The exit URL carries the
 * proxy's credentials: pass it in PROXY_EXIT_URL rather than --url so it stays out of the process
 * list and shell history. It is sealed at rest and never printed back; listings show host:port.
 * Every orchestrator replica picks a change up at once (NOTIFY wdr_proxy_exits). Output is JSON.
 */
const usage = `usage: admin <command> [options]
  proxy-add --label L --class datacenter|residential|premium [--url URL | env PROXY_EXIT_URL] [--country CC] [--authoritative]
  proxy-list
  proxy-disable --label L
  proxy-enable --label L
  proxy-remove --label L
  purge-expired`;

const commands = ['proxy-add', 'proxy-list', 'proxy-disable', 'proxy-enable', 'proxy-remove', 'purge-expired'] as const;
const options = {
  label: { type: 'string' },
  class: { type: 'string' },
  url: { type: 'string' },
  country: { type: 'string' },
  authoritative: { type: 'boolean', default: false },
} as const;

/** One operator command: its exit code, its output written to `io`. */
export async function admin(args: string[], io: CommandIo): Promise<number> {
  const { command, values } = parseCommandLine(usage, commands, options, args, io);
  const env = commandEnv(
    () =>
      loadEnv(
        {
          ...databaseEnv,
          TARGET_URL_KEY: orchestratorEnv.TARGET_URL_KEY,
          TARGET_URL_KEY_PREVIOUS: orchestratorEnv.TARGET_URL_KEY_PREVIOUS,
          SEAL_REQUEST_INPUTS: orchestratorEnv.SEAL_REQUEST_INPUTS,
          PROXY_EXIT_URL: z.string().optional(),
        },
        io.env,
      ),
    io,
  );

  const db = io.database(env.DATABASE_URL, () => new PrismaClient(prismaClientOptions(env.DATABASE_URL, { max: 1 })));
  const sealer = commandEnv(() => Sealer.fromKeys(env.TARGET_URL_KEY, env.TARGET_URL_KEY_PREVIOUS, 'TARGET_URL_KEY'), io);
  const label = () => {
    if (!values.label) throw new ExitConfigError('--label is required');
    return values.label;
  };

  try {
    switch (command) {
      case 'proxy-add': {
        const url = values.url ?? env.PROXY_EXIT_URL;
        if (!url) throw new ExitConfigError('the exit URL is required: PROXY_EXIT_URL=http://user:pass@host:port (or --url)');
        if (!values.class) throw new ExitConfigError('--class is required');
        const exit = await addExit(db, sealer, {
          label: label(),
          networkClass: values.class,
          url,
          country: values.country ?? null,
          countryAuthoritative: values.authoritative,
        });
        io.out(JSON.stringify(exit));
        break;
      }
      case 'proxy-list':
        io.out(JSON.stringify({ items: await listExits(db, sealer) }));
        break;
      case 'proxy-disable':
      case 'proxy-enable': {
        const enabled = command === 'proxy-enable';
        if (!(await setExitEnabled(db, label(), enabled))) throw new ExitConfigError(`no exit labelled ${values.label}`);
        io.out(JSON.stringify({ label: values.label, enabled }));
        break;
      }
      case 'proxy-remove':
        if (!(await removeExit(db, label()))) throw new ExitConfigError(`no exit labelled ${values.label}`);
        io.out(JSON.stringify({ label: values.label, removed: true }));
        break;
      case 'purge-expired':
        // The service's retention pass, now (it also runs every minute): clear inputs sealed, then
        // expired URLs with their sealed inputs, results and cache entries purged. Prints the counts.
        io.out(JSON.stringify(await retentionPass(db, sealer, new Date(), undefined, env.SEAL_REQUEST_INPUTS)));
        break;
      default:
        io.err(usage);
        return 2;
    }
    return 0;
  } catch (err) {
    // Configuration errors are the operator's to fix; anything else is reported without detail that could hold the URL.
    io.err(err instanceof ExitConfigError ? err.message : `failed: ${err instanceof Error ? err.name : 'error'}`);
    return 1;
  }
}

await runCommand(admin);

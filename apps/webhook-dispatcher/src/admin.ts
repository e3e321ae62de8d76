import { commandEnv, parseCommandLine, runCommand, type CommandIo } from '@wdr/kit/cli';
import { databaseEnv, loadEnv } from '@wdr/kit/config';
import { prismaClientOptions } from '@wdr/kit/db';
import { Sealer } from '@wdr/kit/sealing';
import { sealedSecretAad, sealedUrlAad } from './deps.js';
import { envDispatcher } from './env.js';
import { PrismaClient } from './generated/prisma/client.js';

/**
 * Operator commands of webhook-dispatcher (`./dev admin webhook-…`; in a pod `node dist/admin.js`).
 *
 * `webhook-reseal` is the last step of a WEBHOOK_SECRET_KEY rotation (docs/operations.md, "Rotating
 * secrets"): every endpoint URL, signing secret and previous secret sealed under another key than
 * the current one is opened with the key ring and sealed again under the current key, so the old
 * key can leave WEBHOOK_SECRET_KEY_PREVIOUS. Each row is written only if its sealed values are still
 * those it read (a concurrent update or signing-secret rotation wins; rerun to pick such a row up).
 * Run it with the same two variables as the dispatcher, after every dispatcher runs with the new
 * key current. Safe to rerun; output is one JSON line.
 */
const usage = `usage: admin <command>
  webhook-reseal   seal every endpoint's URL and secrets under the current WEBHOOK_SECRET_KEY`;

interface Row {
  id: string;
  url_sealed: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
}

const BATCH = 500;

/** One operator command: its exit code, its output written to `io`. */
export async function admin(args: string[], io: CommandIo): Promise<number> {
  const { command } = parseCommandLine(usage, ['webhook-reseal'], {}, args, io);
  const env = commandEnv(
    () =>
      loadEnv(
        {
          ...databaseEnv,
          WEBHOOK_SECRET_KEY: envDispatcher.WEBHOOK_SECRET_KEY,
          WEBHOOK_SECRET_KEY_PREVIOUS: envDispatcher.WEBHOOK_SECRET_KEY_PREVIOUS,
        },
        io.env,
      ),
    io,
  );

  // A key ring that cannot be right (an id twice) is an environment problem too: one line, exit 2.
  const sealer = commandEnv(() => Sealer.fromKeys(env.WEBHOOK_SECRET_KEY, env.WEBHOOK_SECRET_KEY_PREVIOUS, 'WEBHOOK_SECRET_KEY'), io);
  const db = io.database(env.DATABASE_URL, () => new PrismaClient(prismaClientOptions(env.DATABASE_URL, { max: 1 })));

  try {
    if (command === 'webhook-reseal') {
      const current = sealer.keyId;
      const again = (sealed: string, aad: string) =>
        sealed.split('.')[0] === current ? sealed : sealer.seal(sealer.open(sealed, aad), aad);
      let resealed = 0;
      let changedMeanwhile = 0;
      const failed: { endpoint_id: string; error: string }[] = [];
      let after = '00000000-0000-0000-0000-000000000000';
      for (;;) {
        const rows = await db.$queryRawUnsafe<Row[]>(
          `SELECT id::text, url_sealed, secret_sealed, previous_secret_sealed FROM webhook_endpoints
          WHERE id > $1::uuid
            AND (split_part(url_sealed, '.', 1) <> $2 OR split_part(secret_sealed, '.', 1) <> $2
                 OR split_part(coalesce(previous_secret_sealed, $2), '.', 1) <> $2)
          ORDER BY id LIMIT ${BATCH}`,
          after,
          current,
        );
        for (const r of rows) {
          let next: Row;
          try {
            next = {
              id: r.id,
              url_sealed: again(r.url_sealed, sealedUrlAad(r.id)),
              secret_sealed: again(r.secret_sealed, sealedSecretAad(r.id)),
              previous_secret_sealed: r.previous_secret_sealed === null ? null : again(r.previous_secret_sealed, sealedSecretAad(r.id)),
            };
          } catch (err) {
            failed.push({ endpoint_id: r.id, error: (err as Error).message });
            continue;
          }
          const n = await db.$executeRawUnsafe(
            `UPDATE webhook_endpoints SET url_sealed = $5, secret_sealed = $6, previous_secret_sealed = $7
            WHERE id = $1::uuid AND url_sealed = $2 AND secret_sealed = $3 AND previous_secret_sealed IS NOT DISTINCT FROM $4`,
            r.id,
            r.url_sealed,
            r.secret_sealed,
            r.previous_secret_sealed,
            next.url_sealed,
            next.secret_sealed,
            next.previous_secret_sealed,
          );
          if (n === 1) resealed++;
          else changedMeanwhile++;
        }
        if (rows.length < BATCH) break;
        after = rows[rows.length - 1]!.id;
      }
      io.out(JSON.stringify({ key_id: current, resealed, changed_meanwhile: changedMeanwhile, failed }));
      if (failed.length > 0 || changedMeanwhile > 0) return 1;
    }
  } catch (err) {
    io.err(`failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
  return 0;
}

await runCommand(admin);

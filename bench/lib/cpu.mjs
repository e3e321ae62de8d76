/** CPU time of processes from /proc, and of the Postgres backends serving given databases. */
import { readFileSync } from 'node:fs';
import pg from 'pg';

const TICKS_PER_S = 100; // USER_HZ on Linux

/** CPU seconds (user + system) of a process, from /proc (clock ticks of 10 ms). */
export function cpuOfPid(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
}

/**
 * CPU seconds of each Postgres backend connected to one of `databases` (names), by pid; not the
 * backend asking. `adminUrl`: a connection string to any database of that server.
 */
export async function postgresBackendsCpu(adminUrl, databases) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT pid FROM pg_stat_activity WHERE datname = ANY($1) AND pid <> pg_backend_pid()', [
      databases,
    ]);
    const out = new Map();
    for (const { pid } of rows) {
      try {
        out.set(pid, cpuOfPid(pid));
      } catch {
        // the backend ended in between
      }
    }
    return out;
  } finally {
    await client.end();
  }
}

/** CPU seconds between two readings of postgresBackendsCpu (backends started in between count from 0). */
export const backendsCpuSince = (before, after) => [...after].reduce((n, [pid, c]) => n + c - (before.get(pid) ?? 0), 0);

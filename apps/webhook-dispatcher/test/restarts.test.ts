import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { webhooksApi } from '@wdr/contracts';
import { callInternal } from '@wdr/kit/internal-call';
import { startServiceProcess } from '@wdr/testkit';
import { ok, processStack, type Delivery } from './harness.js';

/**
 * What holds across a restart of the dispatcher with other settings: its sealing key rotated
 * (WEBHOOK_SECRET_KEY and WEBHOOK_SECRET_KEY_PREVIOUS), and its target policy tightened (endpoints
 * created while an address was allowed are refused at their next connection). One dispatcher
 * process at a time on one database and one set of topics; each restart replaces it.
 */
const { stack, setUp, start, tearDown, receiver, endpoint, requestEvent, sql, advance, until, messagesOf, attemptsOf } =
  processStack('webhook-restarts-test');

const KEY_A = Buffer.alloc(32, 21).toString('base64');
const KEY_B = Buffer.alloc(32, 22).toString('base64');

const headersOf = (d: Delivery) => ({
  'webhook-id': String(d.headers['webhook-id']),
  'webhook-timestamp': String(d.headers['webhook-timestamp']),
  'webhook-signature': String(d.headers['webhook-signature']),
});

/** The key ids an endpoint's sealed values name (`<key id>.<iv>.<tag>.<ciphertext>`). */
const sealedKeyIds = async (endpointId: string) =>
  (
    await sql<{ url: string; secret: string; previous: string | null }>(
      `SELECT split_part(url_sealed, '.', 1) AS url, split_part(secret_sealed, '.', 1) AS secret,
              split_part(previous_secret_sealed, '.', 1) AS previous FROM webhook_endpoints WHERE id = $1::uuid`,
      [endpointId],
    )
  )[0];

/** `admin.js webhook-reseal` (built) with these keys: exit code and its JSON line. */
function reseal(keys: Record<string, string>): Promise<{ code: number | null; out: Record<string, unknown> | undefined; err: string }> {
  const script = fileURLToPath(new URL('../dist/admin.js', import.meta.url));
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [script, 'webhook-reseal'], {
      env: { PATH: process.env['PATH'] ?? '', DATABASE_URL: stack.database.url, ...keys },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    proc.stderr.on('data', (b: Buffer) => (err += b.toString()));
    proc.on('error', reject);
    proc.on('exit', (code) => resolve({ code, out: out.trim() ? (JSON.parse(out) as Record<string, unknown>) : undefined, err }));
  });
}

beforeAll(setUp, 60_000);

afterAll(tearDown, 60_000);

describe('rotating WEBHOOK_SECRET_KEY', () => {
  it('endpoints sealed under the old key keep receiving after a restart with a new key and the old one as previous; new values are sealed under the new key; a key dropped too early sends nothing and says why; webhook-reseal moves every endpoint to the new key, then the old one can go', async () => {
    const tenant = randomUUID();
    // Before: one key, plain base64 (id k1), as every deployment had it. The old endpoint's signing
    // secret is mid-rotation (its previous secret sealed too, and signing for an hour).
    await start({ WEBHOOK_SECRET_KEY: KEY_A });
    const old = await receiver(ok);
    const { endpoint: oldEp, secret: firstSecret } = await endpoint(tenant, old.url, ['request.completed']);
    const { secret: oldSecret } = await callInternal(stack.client, webhooksApi.rotateSecret, {
      params: { endpointId: oldEp.id },
      body: { tenant_id: tenant, previous_valid_seconds: 3_600 },
    });
    expect(await sealedKeyIds(oldEp.id)).toEqual({ url: 'k1', secret: 'k1', previous: 'k1' });
    await requestEvent(tenant, 'request.completed');
    await until(
      'the first delivery',
      () => old.deliveries.length,
      (n) => n === 1,
    );
    /** Signed with the endpoint's secret and, during its overlap, its previous one: each verifies alone. */
    const verifiesWithBoth = (d: Delivery) =>
      [oldSecret, firstSecret].map((s) => new Webhook(s).verify(d.body, headersOf(d)) as { type: string }).map((p) => p.type);

    // Rotated: k2 seals, k1 still opens.
    await start({ WEBHOOK_SECRET_KEY: `k2:${KEY_B}`, WEBHOOK_SECRET_KEY_PREVIOUS: `k1:${KEY_A}` });
    const fresh = await receiver(ok);
    const { endpoint: freshEp, secret: freshSecret } = await endpoint(tenant, fresh.url, ['request.completed']);
    expect(await sealedKeyIds(freshEp.id)).toEqual({ url: 'k2', secret: 'k2', previous: null });
    expect(await sealedKeyIds(oldEp.id)).toEqual({ url: 'k1', secret: 'k1', previous: 'k1' });
    await requestEvent(tenant, 'request.completed');
    await until(
      'deliveries after the rotation',
      () => [old.deliveries.length, fresh.deliveries.length],
      ([o, f]) => o === 2 && f === 1,
    );
    for (const d of old.deliveries) expect(verifiesWithBoth(d)).toEqual(['request.completed', 'request.completed']);
    expect(new Webhook(freshSecret).verify(fresh.deliveries[0]!.body, headersOf(fresh.deliveries[0]!))).toMatchObject({
      type: 'request.completed',
    });

    // k1 dropped while an endpoint still names it: that endpoint gets nothing, the log says which key
    // is missing, its message waits (pending); the other endpoint is not held up.
    await start({ WEBHOOK_SECRET_KEY: `k2:${KEY_B}` });
    await requestEvent(tenant, 'request.completed');
    await until(
      "the k2 endpoint's delivery",
      () => fresh.deliveries.length,
      (n) => n === 2,
    );
    await until(
      'the missing key in the log',
      () => stack.dispatcher.logs(),
      (l) => l.includes('sealed under key id \\"k1\\", which is not in the key ring (WEBHOOK_SECRET_KEY: current k2, previous none)'),
    );
    await sleep(500);
    expect(old.arrived()).toBe(2);
    expect((await messagesOf(oldEp.id)).map((m) => m.status)).toEqual(['delivered', 'delivered', 'pending']);
    // Re-sealing cannot do without the old key either: it names the endpoints it could not open.
    const blind = await reseal({ WEBHOOK_SECRET_KEY: `k2:${KEY_B}` });
    expect(blind).toMatchObject({
      code: 1,
      out: {
        key_id: 'k2',
        resealed: 0,
        changed_meanwhile: 0,
        failed: [{ endpoint_id: oldEp.id, error: expect.stringContaining('sealed under key id "k1"') }],
      },
    });

    // The key put back: the held message goes out (once its lease, moved here, has ended).
    await start({ WEBHOOK_SECRET_KEY: `k2:${KEY_B}`, WEBHOOK_SECRET_KEY_PREVIOUS: `k1:${KEY_A}` });
    await advance(60_000);
    await until(
      'the held delivery',
      () => old.deliveries.length,
      (n) => n === 3,
    );
    expect(verifiesWithBoth(old.deliveries[2]!)).toEqual(['request.completed', 'request.completed']);

    // The last step of the rotation: re-seal under k2 (URL, secret and previous secret), then k1 can go.
    const done = await reseal({ WEBHOOK_SECRET_KEY: `k2:${KEY_B}`, WEBHOOK_SECRET_KEY_PREVIOUS: `k1:${KEY_A}` });
    expect(done).toMatchObject({ code: 0, out: { key_id: 'k2', resealed: 1, changed_meanwhile: 0, failed: [] } });
    expect(await sealedKeyIds(oldEp.id)).toEqual({ url: 'k2', secret: 'k2', previous: 'k2' });
    expect((await reseal({ WEBHOOK_SECRET_KEY: `k2:${KEY_B}`, WEBHOOK_SECRET_KEY_PREVIOUS: `k1:${KEY_A}` })).out).toMatchObject({
      resealed: 0,
      failed: [],
    });
    await start({ WEBHOOK_SECRET_KEY: `k2:${KEY_B}` });
    await requestEvent(tenant, 'request.completed');
    await until(
      'deliveries with k1 gone',
      () => [old.deliveries.length, fresh.deliveries.length],
      ([o, f]) => o === 4 && f === 3,
    );
    expect(verifiesWithBoth(old.deliveries[3]!)).toEqual(['request.completed', 'request.completed']);
    expect(new Set(old.deliveries.map((d) => d.id)).size).toBe(4);
  }, 180_000);

  it('refuses to start with a key ring that cannot be right, naming the setting', async () => {
    // A second process on the same database and topics, beside the running one: it never gets going.
    const startOnce = (env: Record<string, string>) =>
      startServiceProcess('webhook-dispatcher', {
        DATABASE_URL: stack.database.url,
        KAFKA_TOPIC_PREFIX: stack.prefix,
        LOG_LEVEL: 'warn',
        TARGET_ALLOWLIST: '127.0.0.1',
        ...env,
      }).then(
        () => 'started',
        (err: Error) => err.message,
      );
    // The new key given as plain base64 (id k1) beside the old k1.
    expect(await startOnce({ WEBHOOK_SECRET_KEY: KEY_B, WEBHOOK_SECRET_KEY_PREVIOUS: `k1:${KEY_A}` })).toContain(
      'WEBHOOK_SECRET_KEY_PREVIOUS: key id k1 is also the id of the current key (WEBHOOK_SECRET_KEY); give the new key its own id (WEBHOOK_SECRET_KEY=<new id>:<base64>)',
    );
    expect(await startOnce({ WEBHOOK_SECRET_KEY: `k2:${Buffer.alloc(16).toString('base64')}` })).toContain(
      'WEBHOOK_SECRET_KEY: key k2 must be 32 bytes, base64-encoded (it decodes to 16)',
    );
    expect(await startOnce({ WEBHOOK_SECRET_KEY: `k3:${KEY_B}`, WEBHOOK_SECRET_KEY_PREVIOUS: `k1:${KEY_A},k1:${KEY_B}` })).toContain(
      'WEBHOOK_SECRET_KEY_PREVIOUS: key id k1 is given twice',
    );
    expect(await startOnce({ WEBHOOK_SECRET_KEY: `k3:${KEY_B}`, WEBHOOK_SECRET_KEY_PREVIOUS: KEY_A })).toContain(
      'WEBHOOK_SECRET_KEY_PREVIOUS: each key must be <id>:<base64 of 32 bytes>',
    );
  }, 60_000);
});

describe('the target policy at every connection', () => {
  it('endpoints created while 127.0.0.1 was allowed are refused at their next attempt once it is not: recorded as target_blocked, nothing reaches the receivers', async () => {
    const tenant = randomUUID();
    await start({ WEBHOOK_SECRET_KEY: KEY_A, TARGET_ALLOWLIST: '127.0.0.1,localhost' });
    const byAddress = await receiver(ok);
    const byName = await receiver(ok);
    const { endpoint: ipEp } = await endpoint(tenant, byAddress.url, ['request.completed']);
    // A name: its URL passes every check that needs no DNS; only the resolved address can refuse it.
    const { endpoint: nameEp } = await endpoint(tenant, byName.url.replace('127.0.0.1', 'localhost'), ['request.completed']);
    await requestEvent(tenant, 'request.completed');
    await until(
      'both delivered while allowed',
      () => [byAddress.deliveries.length, byName.deliveries.length],
      ([a, n]) => a === 1 && n === 1,
    );

    // The name is still allowed, the address it resolves to is not (what a DNS answer changed to a
    // private address looks like); the literal address is refused before any connection.
    await start({ WEBHOOK_SECRET_KEY: KEY_A, TARGET_ALLOWLIST: 'localhost' });
    await requestEvent(tenant, 'request.completed');
    const blocked = await until(
      'the refused attempts',
      async () => [(await attemptsOf(ipEp.id)).slice(1), (await attemptsOf(nameEp.id)).slice(1)],
      ([a, n]) => a!.length === 1 && n!.length === 1,
    );
    for (const [a] of blocked)
      expect(a).toEqual({ attempt: 1, outcome: 'failed', status_code: null, error: 'target_blocked', response_excerpt: null });
    await sleep(500);
    expect([byAddress.arrived(), byName.arrived()]).toEqual([1, 1]);
    // Retried on the schedule like any failed attempt (checked again then).
    for (const id of [ipEp.id, nameEp.id])
      expect((await messagesOf(id)).map((m) => [m.status, m.attempts])).toEqual([
        ['delivered', 1],
        ['pending', 1],
      ]);
  }, 90_000);
});

describe('waking for retries without the poll', () => {
  it('with a minute-long safety poll, a retry is sent when it falls due, and a restarted sender finds the next due attempt itself', async () => {
    await start({ WEBHOOK_SECRET_KEY: KEY_A, WEBHOOK_POLL_MS: '60000' });
    const tenant = randomUUID();
    // Each message is answered 500 once, then 200: its retry is due about 5 s after the first attempt.
    const r = await receiver((_d, nth) => (nth === 1 ? { status: 500 } : { status: 200 }));
    const { endpoint: ep } = await endpoint(tenant, r.url, ['request.completed']);
    await requestEvent(tenant, 'request.completed');
    await until(
      'the retry, sent by the wake this sender set when it scheduled it (the poll would take a minute)',
      () => r.deliveries,
      (ds) => ds.length === 2,
      20_000,
    );
    const [first, second] = r.deliveries;
    expect([first!.answered, second!.answered]).toEqual([500, 200]);
    const gap = (second!.at - first!.at) / 1000;
    expect([gap, gap >= 4.4 && gap < 8]).toEqual([gap, true]); // 5 s +-10 %, and a little for the claim

    // A second message fails once; the sender is restarted before its retry: the new process has no
    // timer of its own, and finds the due time when its first claim finds nothing due.
    await requestEvent(tenant, 'request.completed');
    await until(
      'the second message failed once',
      () => messagesOf(ep.id),
      (ms) => ms.length === 2 && ms.some((m) => m.status === 'pending' && m.attempts === 1),
    );
    // Its retry moved to 10 s from now, so it is surely not due yet when the new process first claims.
    await sql(
      `UPDATE webhook_messages SET next_attempt_at = now() + interval '10 seconds' WHERE endpoint_id = $1::uuid AND status = 'pending'`,
      [ep.id],
    );
    await start({ WEBHOOK_SECRET_KEY: KEY_A, WEBHOOK_POLL_MS: '60000' });
    await until(
      'the second message delivered on its retry',
      () => messagesOf(ep.id),
      (ms) => ms.every((m) => m.status === 'delivered'),
      20_000,
    );
    expect(r.deliveries.map((d) => d.answered)).toEqual([500, 200, 500, 200]);
  }, 90_000);
});

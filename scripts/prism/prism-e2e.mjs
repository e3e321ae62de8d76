#!/usr/bin/env node
// End-to-end through Prism's validating proxy (@stoplight/prism-cli, `prism proxy --errors`) in
// front of a real gateway fleet (@wdr/testkit startFleet: the six services on the local Postgres,
// Redis and Kafka): every response must match packages/contracts/openapi/openapi.json, the document
// tenants get. A response Prism flags (its error type https://stoplight.io/prism/errors#..., or an
// sl-violations header) fails the run. Then a negative control: the same calls through a Prism given
// a document whose error body requires one more field must be flagged.
//   node scripts/prism/prism-e2e.mjs [--results file.json]      (KAFKA_BROKERS as for the tests)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { adminCommand, startFixtureSite, startFleet } from '@wdr/testkit';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const args = process.argv.slice(2);
const resultsFile = args.includes('--results') ? args[args.indexOf('--results') + 1] : undefined;
const documentPath = join(repo, 'packages/contracts/openapi/openapi.json');

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function startPrism(doc, upstream) {
  const port = await freePort();
  const child = spawn(join(here, 'node_modules/.bin/prism'), ['proxy', '--errors', '-h', '127.0.0.1', '-p', String(port), doc, upstream], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 120; i++) {
    if (/Prism is listening/.test(log)) break;
    if (child.exitCode !== null) throw new Error(`prism exited: ${log}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return { base, log: () => log, stop: () => child.kill() };
}

/** One call through Prism: { status, flagged } where flagged says why Prism rejected the response. */
async function call(base, key, method, path, body) {
  const headers = { accept: 'application/json' };
  if (key) headers['x-api-key'] = key;
  if (body) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  const violations = res.headers.get('sl-violations');
  const prismError = /https:\/\/stoplight\.io\/prism\/errors#\w+/.exec(text)?.[0];
  return { method, path, status: res.status, flagged: violations ?? prismError, text };
}

let fleet;
let site;
const prisms = [];
let passed = 0;
let failed = 0;
try {
  fleet = await startFleet();
  site = await startFixtureSite();
  const tenant = await adminCommand(fleet, ['create-tenant', '--name', 'prism', '--credits', '100']);
  const key = String(tenant.api_key);
  const run = async (base) => {
    const out = [];
    const c = async (...a) => {
      const r = await call(base, ...a);
      out.push(r);
      return r;
    };
    const submitted = await c(key, 'POST', '/api/v1/data/requests', { url: `${site.url}/`, mode: 'http' });
    const id = (() => {
      try {
        return JSON.parse(submitted.text).id;
      } catch {
        return undefined;
      }
    })();
    const missing = '00000000-0000-4000-8000-000000000000';
    if (id) {
      await c(key, 'GET', `/api/v1/data/requests/${id}`);
      await c(key, 'GET', `/api/v1/data/requests/${id}/events`);
      await new Promise((r) => setTimeout(r, 3_000));
      await c(key, 'GET', `/api/v1/data/requests/${id}/result`);
    }
    await c(key, 'GET', '/api/v1/data/requests');
    await c(key, 'GET', '/api/v1/data/balance');
    await c(key, 'GET', '/api/v1/data/usage');
    await c(key, 'GET', '/api/v1/data/recipes');
    await c(key, 'GET', `/api/v1/data/requests/${missing}`);
    await c(key, 'GET', `/api/v1/data/requests/${missing}/events`);
    await c(key, 'GET', `/api/v1/data/batches/${missing}`);
    // (No call without any key: Prism answers that itself from the security scheme, it never reaches the gateway.)
    await c('wdr_wrong', 'GET', '/api/v1/data/balance');
    // A read past the tenant's read rate: the 429 and its headers as documented.
    const limited = await adminCommand(fleet, ['create-tenant', '--name', `prism-reads-${out.length}-${Date.now()}`, '--credits', '1']);
    await adminCommand(fleet, ['set-limits', '--tenant', String(limited.tenant_id), '--read-rate', '1']);
    let refused;
    // The new limit reaches the gateway's credential cache a moment after the command's commit.
    for (let i = 0; i < 50 && !refused; i++) {
      const r = await call(base, String(limited.api_key), 'GET', '/api/v1/data/balance');
      if (r.status === 429) refused = r;
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    out.push(refused ?? { method: 'GET', path: '/api/v1/data/balance', status: 0, flagged: 'no 429 past the read rate', text: '' });
    return out;
  };

  const prism = await startPrism(documentPath, fleet.url('gateway'));
  prisms.push(prism);
  const results = await run(prism.base);
  const bad = results.filter((r) => r.flagged);
  for (const r of results)
    console.log(
      `${r.flagged ? 'FAIL' : 'ok  '} ${r.method} ${r.path} -> ${r.status}${r.flagged ? ` ${r.flagged}: ${r.text.slice(0, 400)}` : ''}`,
    );
  if (bad.length) failed++;
  else passed++;
  console.log(`${results.length - bad.length} of ${results.length} responses validated by Prism against the document`);

  // Negative control: the error body now requires a field the gateway never sends.
  const doc = JSON.parse(readFileSync(documentPath, 'utf8'));
  const body = doc.components.schemas.PublicErrorBody;
  body.properties.must_not_exist = { type: 'string' };
  body.required = [...body.required, 'must_not_exist'];
  const mutated = join(mkdtempSync(join(tmpdir(), 'wdr-prism-')), 'openapi.json');
  writeFileSync(mutated, JSON.stringify(doc));
  const strict = await startPrism(mutated, fleet.url('gateway'));
  prisms.push(strict);
  const r404 = await call(strict.base, key, 'GET', '/api/v1/data/requests/00000000-0000-4000-8000-000000000000');
  if (r404.flagged) {
    passed++;
    console.log(`ok   negative control: an error body missing a required field is flagged (${r404.flagged}, status ${r404.status})`);
  } else {
    failed++;
    console.log(`FAIL negative control: Prism let a non-matching 404 through (${r404.status} ${r404.text.slice(0, 200)})`);
  }
} catch (err) {
  failed++;
  console.log(`FAIL ${err?.stack ?? err}`);
} finally {
  for (const p of prisms) p.stop();
  await site?.close?.().catch?.(() => undefined);
  await fleet?.stop().catch(() => undefined);
}
console.log(`${passed} passed, ${failed} failed`);
if (resultsFile)
  writeFileSync(
    resultsFile,
    `${JSON.stringify({ name: 'openapi-prism-proxy (e2e)', passed, failed, skipped: 0, suitesFailed: failed })}\n`,
  );
process.exit(failed ? 1 : 0);

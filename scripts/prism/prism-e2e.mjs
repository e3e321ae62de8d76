#!/usr/bin/env node
// End-to-end through Prism's validating proxy (@stoplight/prism-cli, `prism proxy --errors`) in
// front of a real gateway fleet (@wdr/testkit startFleet: the six services on the local Postgres,
// Redis and Kafka): every response must match packages/contracts/openapi/openapi.json, the document
// tenants get. A response Prism flags (its error type https://stoplight.io/prism/errors#..., or an
// sl-violations header) fails the run. Every operation of the document is called at least once
// (data reads, submissions, retry and cancel, batches, the event stream, the cabinet's requests,
// batches, browser workspaces, members, projects, project keys, workflows, webhooks and recipes, the
// browser-workflow API with a project key) and the gateway's refusals are among the answers (401,
// 402, 404, 409, 422, 429). Calls Prism would answer itself (no credentials, an invalid body) go
// through a second Prism with --validate-request=false and a copy of the document without security
// requirements, so they reach the gateway (a body over 1 MB too: 413). Then a negative control: the same calls through a Prism given
// a document whose error body requires one more field must be flagged.
//   node scripts/prism/prism-e2e.mjs [--results file.json]      (KAFKA_BROKERS as for the tests)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { adminCommand, freePort, startFixtureSite, startFleet } from '@wdr/testkit';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const args = process.argv.slice(2);
const resultsFile = args.includes('--results') ? args[args.indexOf('--results') + 1] : undefined;
const documentPath = join(repo, 'packages/contracts/openapi/openapi.json');

async function startPrism(doc, upstream, extra = []) {
  const port = await freePort();
  const child = spawn(
    join(here, 'node_modules/.bin/prism'),
    ['proxy', '--errors', ...extra, '-h', '127.0.0.1', '-p', String(port), doc, upstream],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
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

/**
 * One call through Prism: { status, flagged } where flagged says why Prism rejected the response.
 * `auth`: an API key (string), { bearer }, { project } (a project key), or null (no credential);
 * `body`: an object (sent as JSON) or { raw } (sent as is, JSON content type).
 */
async function call(base, auth, method, path, body, extraHeaders = {}) {
  const headers = { accept: 'application/json', ...extraHeaders };
  if (typeof auth === 'string') headers['x-api-key'] = auth;
  else if (auth?.bearer) headers.authorization = `Bearer ${auth.bearer}`;
  else if (auth?.project) headers['x-api-key'] = auth.project;
  const raw = body && typeof body === 'object' && 'raw' in body ? body.raw : body ? JSON.stringify(body) : undefined;
  if (raw !== undefined) headers['content-type'] = 'application/json';
  let res;
  let text;
  try {
    res = await fetch(base + path, { method, headers, body: raw, signal: AbortSignal.timeout(30_000) });
    text = await res.text();
  } catch (err) {
    return { method, path, status: 0, flagged: `no answer within 30 s (${err?.name ?? err})`, text: '', location: null };
  }
  const violations = res.headers.get('sl-violations');
  const prismError = /https:\/\/stoplight\.io\/prism\/errors#\w+/.exec(text)?.[0];
  return { method, path, status: res.status, flagged: violations ?? prismError, text, location: res.headers.get('location') };
}

const json = (r) => {
  try {
    return JSON.parse(r.text);
  } catch {
    return {};
  }
};

/** The document's path template a concrete path matches (`/api/v1/data/requests/{id}`), for the coverage count. */
const templates = Object.entries(JSON.parse(readFileSync(documentPath, 'utf8')).paths).flatMap(([path, ops]) =>
  Object.keys(ops).map((m) => ({
    key: `${m.toUpperCase()} ${path}`,
    method: m.toUpperCase(),
    re: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  })),
);
const operationOf = (r) => templates.find((t) => t.method === r.method && t.re.test(r.path.split('?')[0]))?.key;

let fleet;
let site;
let receiver;
const prisms = [];
let passed = 0;
let failed = 0;
try {
  fleet = await startFleet();
  site = await startFixtureSite();
  // A webhook receiver on loopback (test fleets allow loopback webhook URLs).
  receiver = createHttpServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hookUrl = `http://127.0.0.1:${receiver.address().port}/hooks`;
  const tenant = await adminCommand(fleet, ['create-tenant', '--name', 'prism', '--credits', '500']);
  const key = String(tenant.api_key);
  const cabinet = {
    bearer: String((await adminCommand(fleet, ['issue-cabinet-token', '--tenant', String(tenant.tenant_id)])).cabinet_token),
  };
  // A second tenant with a submission rate of 1 per hour: its second submission is the 429.
  const limited = await adminCommand(fleet, ['create-tenant', '--name', 'prism-limited', '--credits', '50']);
  await adminCommand(fleet, ['set-limits', '--tenant', String(limited.tenant_id), '--rate', '1', '--window', '3600']);
  const poor = await adminCommand(fleet, ['create-tenant', '--name', 'prism-poor', '--credits', '0']);
  const missing = '00000000-0000-4000-8000-000000000000';
  const page = (q) => ({ url: `${site.url}/page?p=${q}`, mode: 'http' });
  const settle = () => new Promise((r) => setTimeout(r, 3_000));

  /** Calls whose requests are valid: Prism checks each request and each response against the document. */
  const run = async (base) => {
    const out = [];
    const c = async (...a) => {
      const r = await call(base, ...a);
      out.push(r);
      return r;
    };
    // Data API: submissions, reads, retry and cancel, batches.
    const submitted = await c(key, 'POST', '/api/v1/data/requests', { url: `${site.url}/`, mode: 'http' });
    const id = json(submitted).id;
    if (id) {
      await c(key, 'GET', `/api/v1/data/requests/${id}`);
      await c(key, 'GET', `/api/v1/data/requests/${id}/events`);
      await settle();
      await c(key, 'GET', `/api/v1/data/requests/${id}/result`);
      await c(key, 'GET', `/api/v1/data/requests/${id}/events/stream`, undefined, { accept: 'text/event-stream' });
      await c(key, 'GET', `/api/v1/data/requests/${id}/extraction`);
      await c(key, 'GET', `/api/v1/data/requests/${id}/debug-artifacts/screenshot`);
      await c(key, 'POST', `/api/v1/data/requests/${id}/cancel`);
      await c(key, 'POST', `/api/v1/data/requests/${id}/retry`);
    }
    await c(key, 'GET', '/api/v1/data/requests?limit=5');
    await c(key, 'GET', '/api/v1/data/balance');
    await c(key, 'GET', '/api/v1/data/statement');
    await c(key, 'GET', '/api/v1/data/usage');
    await c(key, 'GET', '/api/v1/data/recipes');
    const batch = json(await c(key, 'POST', '/api/v1/data/batches', { jobs: [page('b1'), page('b2')] }));
    if (batch.batch_id) await c(key, 'GET', `/api/v1/data/batches/${batch.batch_id}`);
    await c(key, 'GET', `/api/v1/data/requests/${missing}`);
    await c(key, 'GET', `/api/v1/data/requests/${missing}/events`);
    await c(key, 'GET', `/api/v1/data/batches/${missing}`);
    // Valid requests the gateway refuses: a budget below the base price (422), a reused Idempotency-Key
    // with another body (409), no credits (402), a wrong key (401), a second submission past the rate (429).
    await c(key, 'POST', '/api/v1/data/requests', { url: `${site.url}/`, mode: 'browser', max_credits_per_request: 1 });
    await c(key, 'POST', '/api/v1/data/requests', page('i1'), { 'idempotency-key': 'prism-idempotency-1' });
    await c(key, 'POST', '/api/v1/data/requests', page('i2'), { 'idempotency-key': 'prism-idempotency-1' });
    await c(String(poor.api_key), 'POST', '/api/v1/data/requests', page('p1'));
    await c('wdr_wrong', 'GET', '/api/v1/data/balance');
    await c(String(limited.api_key), 'POST', '/api/v1/data/requests', page('l1'));
    await c(String(limited.api_key), 'POST', '/api/v1/data/requests', page('l2'));
    // A read past the tenant's read rate: the 429 and its headers as documented.
    const readLimited = await adminCommand(fleet, ['create-tenant', '--name', `prism-reads-${Date.now()}-${out.length}`, '--credits', '1']);
    await adminCommand(fleet, ['set-limits', '--tenant', String(readLimited.tenant_id), '--read-rate', '1']);
    let refused;
    // The new limit reaches the gateway's credential cache a moment after the command's commit.
    for (let i = 0; i < 50 && !refused; i++) {
      const r = await call(base, String(readLimited.api_key), 'GET', '/api/v1/data/balance');
      if (r.status === 429) refused = r;
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    out.push(refused ?? { method: 'GET', path: '/api/v1/data/balance', status: 0, flagged: 'no 429 past the read rate', text: '' });

    // Cabinet: submissions and batches.
    await c(cabinet, 'POST', '/api/v1/client/requests', page('c1'));
    await c(cabinet, 'POST', '/api/v1/client/batches', { jobs: [page('cb1')] });

    // Cabinet: the tenant's API keys (listed without secrets; an unknown key is 404).
    await c(cabinet, 'GET', '/api/v1/client/api-keys');
    await c(cabinet, 'DELETE', `/api/v1/client/api-keys/${missing}`);

    // Cabinet: browser workspaces, members, projects, project keys, workflows, webhooks.
    const b = '/api/v1/client/browser';
    const ws = json(await c(cabinet, 'POST', `${b}/workspaces`, { name: 'prism', owner_user_id: 1 })).id;
    await c(cabinet, 'GET', `${b}/workspaces`);
    if (ws) {
      const created = await c(cabinet, 'POST', `${b}/workspaces/${ws}/projects`, { name: 'Prism', slug: 'prism' });
      await c(cabinet, 'GET', `${b}/workspaces/${ws}/projects`);
      await c(cabinet, 'POST', `${b}/workspaces/${ws}/members`, { user_id: 2, role: 'member' });
      await c(cabinet, 'GET', `${b}/workspaces/${ws}/members`);
      await c(cabinet, 'DELETE', `${b}/workspaces/${ws}/members/2`);
      const project = created.location?.split('/').pop();
      const env = project ? json(await c(cabinet, 'GET', `${b}/projects/${project}`)).environments?.[0]?.id : undefined;
      if (project && env) {
        const e = `${b}/projects/${project}/environments/${env}`;
        const issued = json(await c(cabinet, 'POST', `${e}/api-keys`, { label: 'prism' }));
        await c(cabinet, 'GET', `${e}/api-keys`);
        const wf = json(await c(cabinet, 'POST', `${b}/projects/${project}/workflows`, { name: 'Prism workflow' })).id;
        await c(cabinet, 'GET', `${b}/projects/${project}/workflows`);
        if (wf) {
          const version = json(
            await c(cabinet, 'POST', `${b}/workflows/${wf}/versions`, { definition: { url: `${site.url}/page?wf=1`, mode: 'browser' } }),
          );
          if (version.id) {
            const updated = json(
              await c(cabinet, 'PATCH', `${b}/workflow-versions/${version.id}`, {
                revision: version.revision,
                definition: { url: `${site.url}/page?wf=2`, mode: 'browser' },
              }),
            );
            await c(cabinet, 'POST', `${b}/workflow-versions/${version.id}/publish`, { revision: updated.revision ?? version.revision });
            await c(cabinet, 'POST', `${b}/workflows/${wf}/versions/${version.id}/activate`, {
              workflow_version: json(await c(cabinet, 'GET', `${b}/workflows/${wf}`)).workflow_version,
            });
          }
          await c(cabinet, 'GET', `${b}/workflows/${wf}`);
        }
        const hook = json(await c(cabinet, 'POST', `${e}/webhooks`, { url: hookUrl, event_types: ['request.completed'] })).endpoint?.id;
        await c(cabinet, 'GET', `${e}/webhooks`);
        if (hook) {
          await c(cabinet, 'GET', `${e}/webhooks/${hook}`);
          await c(cabinet, 'PATCH', `${e}/webhooks/${hook}`, { description: 'through Prism' });
          await c(cabinet, 'POST', `${e}/webhooks/${hook}/rotate-secret`, { previous_valid_seconds: 60 });
          await c(cabinet, 'GET', `${e}/webhooks/${hook}/deliveries`);
          await c(cabinet, 'POST', `${e}/webhooks/${hook}/deliveries/${missing}/redeliver`);
        }
        // The browser-workflow API with the project key.
        if (issued.api_key && wf) {
          const pk = { project: issued.api_key };
          const p = `/api/v1/browser/projects/${project}/environments/${env}`;
          const runId = json(await c(pk, 'POST', `${p}/workflows/${wf}/runs`)).id;
          if (runId) await c(pk, 'GET', `${p}/runs/${runId}`);
          await c(pk, 'GET', `${p}/webhooks`);
          if (hook) await c(pk, 'GET', `${p}/webhooks/${hook}/deliveries`);
        }
        if (hook) {
          await c(cabinet, 'POST', `${e}/webhooks/${hook}/disable`);
          await c(cabinet, 'DELETE', `${e}/webhooks/${hook}`);
        }
        if (issued.id) await c(cabinet, 'DELETE', `${e}/api-keys/${issued.id}`);
      }
    }

    // Cabinet: recipes.
    const rules = { dsl_version: 1, fields: [{ name: 'title', type: 'string', required: true, selectors: ['h1.title'] }] };
    await c(cabinet, 'GET', '/api/v1/client/recipes/capabilities');
    const recipe = json(
      await c(cabinet, 'POST', '/api/v1/client/recipes', { name: 'Prism', sample_url: `${site.url}/product`, definition: rules }),
    );
    await c(cabinet, 'GET', '/api/v1/client/recipes');
    if (recipe.id) {
      await c(cabinet, 'GET', `/api/v1/client/recipes/${recipe.id}`);
      await c(cabinet, 'PATCH', `/api/v1/client/recipes/${recipe.id}`, { description: 'through Prism' });
      const v = json(await c(cabinet, 'POST', `/api/v1/client/recipes/${recipe.id}/versions`, { definition: rules }));
      if (v.id) await c(cabinet, 'POST', `/api/v1/client/recipes/${recipe.id}/versions/${v.id}/activate`);
      await c(cabinet, 'POST', `/api/v1/client/recipes/${recipe.id}/generate`, {
        prompt: 'the product title',
        sample_url: `${site.url}/product`,
        method: 'heuristic',
      });
      await c(cabinet, 'DELETE', `/api/v1/client/recipes/${recipe.id}`);
    }
    await c(cabinet, 'GET', `/api/v1/client/recipes/${missing}`);
    return out;
  };

  /**
   * Calls Prism would answer itself (it validates requests, security included, before proxying):
   * through a Prism started with --validate-request=false they reach the gateway, and the gateway's
   * answers are validated against the document like any other.
   */
  const hostile = async (base) => {
    const out = [];
    const c = async (...a) => out.push(await call(base, ...a));
    await c(null, 'GET', '/api/v1/data/balance');
    await c(null, 'POST', '/api/v1/data/requests', { url: `${site.url}/`, mode: 'http' });
    await c(null, 'GET', '/api/v1/client/recipes');
    await c(key, 'POST', '/api/v1/data/requests', { url: 'not a url', mode: 'warp' });
    await c(key, 'POST', '/api/v1/data/batches', { jobs: [] });
    await c(key, 'POST', '/api/v1/data/requests', { url: `${site.url}/`, mode: 'http', user_agent: 'x'.repeat(1_100_000) });
    await c(key, 'GET', '/api/v1/data/requests/not-a-uuid');
    await c(cabinet, 'POST', '/api/v1/client/browser/workspaces', { name: '' });
    await c(cabinet, 'POST', '/api/v1/client/recipes', { name: 'x' });
    return out;
  };

  const report = (label, results) => {
    for (const r of results)
      console.log(
        `${r.flagged ? 'FAIL' : 'ok  '} ${label} ${r.method} ${r.path} -> ${r.status}${r.flagged ? ` ${r.flagged}: ${r.text.slice(0, 400)}` : ''}`,
      );
    return results.filter((r) => r.flagged);
  };

  const prism = await startPrism(documentPath, fleet.url('gateway'));
  prisms.push(prism);
  // --validate-request=false lets an invalid body through, but Prism still checks the security
  // requirements and answers a call without credentials itself (its own 401, flagged as such). This
  // Prism reads a copy of the document without security requirements (every response, the 401 among
  // them, as in the document), so those calls reach the gateway and its 401 is validated. (A malformed
  // JSON body is left out: Prism 5.16's proxy never answers one, with or without request validation.)
  const unsecured = JSON.parse(readFileSync(documentPath, 'utf8'));
  delete unsecured.security;
  for (const ops of Object.values(unsecured.paths)) for (const op of Object.values(ops)) delete op.security;
  const unsecuredPath = join(mkdtempSync(join(tmpdir(), 'wdr-prism-')), 'openapi.json');
  writeFileSync(unsecuredPath, JSON.stringify(unsecured));
  const open = await startPrism(unsecuredPath, fleet.url('gateway'), ['--validate-request=false']);
  prisms.push(open);
  const results = [...(await run(prism.base)), ...(await hostile(open.base))];
  const bad = report('', results);
  if (bad.length) failed++;
  else passed++;
  const statuses = {};
  for (const r of results) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  const covered = new Set(results.map(operationOf).filter(Boolean));
  console.log(
    `${results.length - bad.length} of ${results.length} responses validated by Prism against the document ` +
      `(statuses ${Object.entries(statuses)
        .map(([k, v]) => `${k}x${v}`)
        .join(' ')}; ${covered.size} of ${templates.length} operations)`,
  );
  const uncovered = templates.filter((t) => !covered.has(t.key)).map((t) => t.key);
  // Every operation of the document is called at least once: a new operation comes with its call here.
  if (uncovered.length) {
    failed++;
    console.log(`FAIL operations of the document not called: ${uncovered.join(', ')}`);
  } else passed++;

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
  receiver?.close();
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

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { adminCommand, eventually, startFixtureSite, sharedFleet, withDatabase, type FixtureSite, type Fleet } from '@wdr/testkit';

/**
 * Browser workflows through the real fleet (issue 10): workspaces, projects and their environments,
 * members (role update, last owner 409), workflows, drafts, publish (stale revision 409), activate
 * and roll back (stale workflow_version 409), Idempotency-Key on the spec's four writes,
 * project+environment keys, webhook endpoints created through the gateway in webhook-dispatcher,
 * and the browser-workflow API's cursor pages of endpoints and deliveries (other keys see nothing).
 * Deliveries reach a real receiver on 127.0.0.1 and their Standard Webhooks signature is checked.
 * Runs of a workflow's active version with the project+environment key render in the real
 * Chromium, reach only their scope's endpoints, and stay within the project's budget cap.
 */
let fleet: Fleet;
let site: FixtureSite;
const gateway = () => request(fleet.url('gateway'));

interface Tenant {
  id: string;
  apiKey: string;
  token: string;
}

async function newTenant(name: string): Promise<Tenant> {
  const t = await adminCommand(fleet, ['create-tenant', '--name', name, '--credits', '100']);
  const c = await adminCommand(fleet, ['issue-cabinet-token', '--tenant', t['tenant_id'] as string]);
  return { id: t['tenant_id'] as string, apiKey: t['api_key'] as string, token: c['cabinet_token'] as string };
}

const B = '/api/v1/client/browser';
const post = (t: Tenant, path: string, body: unknown, key?: string) => {
  const r = gateway().post(`${B}${path}`).set('Authorization', `Bearer ${t.token}`);
  return (key ? r.set('Idempotency-Key', key) : r).send(body as object);
};
const patch = (t: Tenant, path: string, body: unknown) =>
  gateway()
    .patch(`${B}${path}`)
    .set('Authorization', `Bearer ${t.token}`)
    .send(body as object);
const get = (t: Tenant, path: string) => gateway().get(`${B}${path}`).set('Authorization', `Bearer ${t.token}`);
const del = (t: Tenant, path: string) => gateway().delete(`${B}${path}`).set('Authorization', `Bearer ${t.token}`);

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

let receiver: http.Server;
let receiverUrl: string;
const received: Received[] = [];

let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  site = await startFixtureSite();
  fleet = sharedFleet();
  [a, b] = await Promise.all([newTenant('workflows-a'), newTenant('workflows-b')]);
}, 180_000);

afterAll(async () => {
  await site?.close();
  await new Promise((resolve) => receiver?.close(resolve));
}, 60_000);

/** Verified as a receiver would, with the `standardwebhooks` package (signature and timestamp tolerance). */
function signatureValid(r: Received, secret: string): boolean {
  try {
    new Webhook(secret).verify(r.body, {
      'webhook-id': String(r.headers['webhook-id']),
      'webhook-timestamp': String(r.headers['webhook-timestamp']),
      'webhook-signature': String(r.headers['webhook-signature']),
    });
    return true;
  } catch {
    return false;
  }
}

let workspaceId: string;
let projectId: string;
let production: string;
let staging: string;

describe('workspaces, projects, members', () => {
  it('creates a workspace and a project with production and staging; the slug is unique in the workspace', async () => {
    const w = await post(a, '/workspaces', { name: 'Acme', owner_user_id: 1 });
    expect(w.status).toBe(201);
    workspaceId = w.body.id;

    const p = await post(
      a,
      `/workspaces/${workspaceId}/projects`,
      { name: 'Shop', slug: 'shop', budget_cap_tokens: 50 },
      'project-create-1',
    );
    expect(p.status).toBe(204);
    expect(p.text).toBe('');
    const location = p.headers['location'] as string;
    expect(location).toMatch(/^\/api\/v1\/client\/browser\/projects\/[0-9a-f-]{36}$/);
    projectId = location.split('/').pop()!;

    // The same key and body: a replay (same project, nothing new); another body under the key: 409.
    const replay = await post(
      a,
      `/workspaces/${workspaceId}/projects`,
      { name: 'Shop', slug: 'shop', budget_cap_tokens: 50 },
      'project-create-1',
    );
    expect(replay.status).toBe(204);
    expect(replay.headers['location']).toBe(location);
    expect((await post(a, `/workspaces/${workspaceId}/projects`, { name: 'Other', slug: 'other' }, 'project-create-1')).body.code).toBe(
      'IDEMPOTENCY_CONFLICT',
    );
    const dup = await post(a, `/workspaces/${workspaceId}/projects`, { name: 'Shop again', slug: 'shop' });
    expect({ status: dup.status, code: dup.body.code }).toEqual({ status: 409, code: 'CONFLICT' });
    expect((await post(a, `/workspaces/${workspaceId}/projects`, { name: 'Bad', slug: 'Not A Slug' })).status).toBe(422);

    const list = await get(a, `/workspaces/${workspaceId}/projects`);
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(1);
    const project = list.body.items[0];
    expect(project).toMatchObject({ id: projectId, slug: 'shop', budget_cap_tokens: 50 });
    expect(project.environments.map((e: { name: string }) => e.name)).toEqual(['production', 'staging']);
    [production, staging] = project.environments.map((e: { id: string }) => e.id);

    // Another tenant sees none of it.
    expect((await get(b, `/workspaces/${workspaceId}/projects`)).status).toBe(404);
    expect((await post(b, `/workspaces/${workspaceId}/projects`, { name: 'x', slug: 'x' })).status).toBe(404);
    expect((await get(b, '/workspaces')).body.items).toEqual([]);
  });

  it('adds members, updates a role on re-adding, and refuses to demote or remove the last owner', async () => {
    expect((await post(a, `/workspaces/${workspaceId}/members`, { user_id: 2, role: 'member' }, 'member-add-2')).status).toBe(204);
    expect((await post(a, `/workspaces/${workspaceId}/members`, { user_id: 2, role: 'admin' })).status).toBe(204);
    const members = await get(a, `/workspaces/${workspaceId}/members`);
    expect(members.body.items.map((m: { user_id: number; role: string }) => [m.user_id, m.role])).toEqual([
      [1, 'owner'],
      [2, 'admin'],
    ]);

    const demote = await post(a, `/workspaces/${workspaceId}/members`, { user_id: 1, role: 'admin' });
    expect({ status: demote.status, code: demote.body.code }).toEqual({ status: 409, code: 'CONFLICT' });
    expect((await del(a, `/workspaces/${workspaceId}/members/1`)).status).toBe(409);
    expect((await post(a, `/workspaces/${workspaceId}/members`, { user_id: 3, role: 'superuser' })).status).toBe(422);

    // With a second owner, the first can step down.
    expect((await post(a, `/workspaces/${workspaceId}/members`, { user_id: 2, role: 'owner' })).status).toBe(204);
    expect((await post(a, `/workspaces/${workspaceId}/members`, { user_id: 1, role: 'member' })).status).toBe(204);
    expect((await del(a, `/workspaces/${workspaceId}/members/2`)).status).toBe(409);
    expect((await del(a, `/workspaces/${workspaceId}/members/1`)).status).toBe(204);
    const after = await get(a, `/workspaces/${workspaceId}/members?limit=1`);
    expect(after.body).toEqual({ items: [expect.objectContaining({ user_id: 2, role: 'owner' })], next_cursor: null });
  });
});

describe('workflows and versions', () => {
  const definition = (path: string) => ({
    url: `https://example.com/${path}`,
    wait_for_selector: '#list',
    browser_actions: [{ type: 'click', selector: '#more' }],
    result_text_selector: 'main',
  });

  it('drafts, edits, publishes (stale revision 409), activates and rolls back (stale workflow_version 409)', async () => {
    const wf = await post(a, `/projects/${projectId}/workflows`, { name: 'catalog' });
    expect(wf.status).toBe(201);
    const workflowId = wf.body.id as string;
    expect(wf.body).toMatchObject({ workflow_version: 0, active_version_id: null });

    const bad = await post(a, `/workflows/${workflowId}/versions`, {
      definition: { url: 'https://example.com', mode: 'http', timeout_ms: 1 },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['definition.timeout_ms']);
    const notBrowser = await post(a, `/workflows/${workflowId}/versions`, { definition: { url: 'https://example.com', mode: 'http' } });
    expect(notBrowser.body.details).toEqual([{ field: 'definition.mode', issue: expect.any(String) }]);

    const v1 = await post(a, `/workflows/${workflowId}/versions`, { definition: definition('v1') });
    expect(v1.status).toBe(201);
    expect(v1.body).toMatchObject({ number: 1, status: 'draft', revision: 1, active: false });
    const edited = await patch(a, `/workflow-versions/${v1.body.id}`, { revision: 1, definition: definition('v1b') });
    expect(edited.body).toMatchObject({ revision: 2, definition: definition('v1b') });
    expect((await patch(a, `/workflow-versions/${v1.body.id}`, { revision: 1, definition: definition('x') })).status).toBe(409);

    const stale = await post(a, `/workflow-versions/${v1.body.id}/publish`, { revision: 1 });
    expect({ status: stale.status, code: stale.body.code }).toEqual({ status: 409, code: 'CONFLICT' });
    const published = await post(a, `/workflow-versions/${v1.body.id}/publish`, { revision: 2 }, 'publish-v1-key');
    expect(published.status).toBe(204);
    expect(published.text).toBe('');
    expect((await post(a, `/workflow-versions/${v1.body.id}/publish`, { revision: 2 }, 'publish-v1-key')).status).toBe(204); // replay
    expect((await post(a, `/workflow-versions/${v1.body.id}/publish`, { revision: 2 })).status).toBe(409); // already published
    expect((await patch(a, `/workflow-versions/${v1.body.id}`, { revision: 2, definition: definition('late') })).status).toBe(409); // immutable

    // A draft cannot be activated.
    const v2 = await post(a, `/workflows/${workflowId}/versions`, { definition: definition('v2') });
    expect((await post(a, `/workflows/${workflowId}/versions/${v2.body.id}/activate`, { workflow_version: 0 })).status).toBe(409);
    expect((await post(a, `/workflow-versions/${v2.body.id}/publish`, { revision: 1 })).status).toBe(204);

    expect(
      (await post(a, `/workflows/${workflowId}/versions/${v1.body.id}/activate`, { workflow_version: 0 }, 'activate-v1-key')).status,
    ).toBe(204);
    expect(
      (await post(a, `/workflows/${workflowId}/versions/${v1.body.id}/activate`, { workflow_version: 0 }, 'activate-v1-key')).status,
    ).toBe(204); // replay
    expect(
      (await post(a, `/workflows/${workflowId}/versions/${v2.body.id}/activate`, { workflow_version: 0 }, 'activate-v1-key')).body.code,
    ).toBe('IDEMPOTENCY_CONFLICT');
    expect((await post(a, `/workflows/${workflowId}/versions/${v2.body.id}/activate`, { workflow_version: 1 })).status).toBe(204);
    const staleActivate = await post(a, `/workflows/${workflowId}/versions/${v1.body.id}/activate`, { workflow_version: 1 });
    expect({ status: staleActivate.status, code: staleActivate.body.code }).toEqual({ status: 409, code: 'CONFLICT' });
    // Rollback: the earlier published version again, with the current workflow_version.
    expect((await post(a, `/workflows/${workflowId}/versions/${v1.body.id}/activate`, { workflow_version: 2 })).status).toBe(204);

    const detail = await get(a, `/workflows/${workflowId}`);
    expect(detail.body).toMatchObject({ workflow_version: 3, active_version_id: v1.body.id });
    expect(detail.body.versions.map((v: { number: number; status: string; active: boolean }) => [v.number, v.status, v.active])).toEqual([
      [2, 'published', false],
      [1, 'published', true],
    ]);
    expect((await get(b, `/workflows/${workflowId}`)).status).toBe(404);
    expect((await post(b, `/workflow-versions/${v1.body.id}/publish`, { revision: 2 })).status).toBe(404);
  });
});

describe('project+environment keys, webhooks and the browser-workflow API', () => {
  const browserApi = (key: string, path: string) => gateway().get(`/api/v1/browser/projects/${path}`).set('X-API-Key', key);

  it("lists the scope's endpoints and a webhook's signed deliveries in cursor pages; other keys see nothing", async () => {
    const issued = await post(a, `/projects/${projectId}/environments/${production}/api-keys`, { label: 'ci' });
    expect(issued.status).toBe(201);
    const prodKey = issued.body.api_key as string;
    expect(prodKey).toMatch(/^wdrp_/);
    const stagingKey = (await post(a, `/projects/${projectId}/environments/${staging}/api-keys`, {})).body.api_key as string;
    expect((await get(a, `/projects/${projectId}/environments/${production}/api-keys`)).body.items).toEqual([
      expect.not.objectContaining({ api_key: expect.anything() }),
    ]);

    // A private address is refused at creation.
    const privateUrl = await post(a, `/projects/${projectId}/environments/${production}/webhooks`, {
      url: 'http://10.1.2.3/hook',
      event_types: ['request.completed'],
    });
    expect(privateUrl.status).toBe(422);

    // Watcher takes webhook.endpoint_disabled; flapper is disabled and re-enabled three times.
    const watcher = await post(a, `/projects/${projectId}/environments/${production}/webhooks`, {
      url: `${receiverUrl}/hooks/watcher?token=secret-token`,
      event_types: ['webhook.endpoint_disabled'],
      description: 'watcher',
    });
    expect(watcher.status).toBe(201);
    expect(watcher.body.secret).toMatch(/^whsec_/);
    expect(watcher.body.endpoint).toMatchObject({
      project_id: projectId,
      environment_id: production,
      url_origin: receiverUrl,
      status: 'enabled',
    });
    const flapper = await post(a, `/projects/${projectId}/environments/${production}/webhooks`, {
      url: `${receiverUrl}/hooks/flapper`,
      event_types: ['request.completed'],
    });
    const watcherId = watcher.body.endpoint.id as string;
    const flapperId = flapper.body.endpoint.id as string;
    // One in staging, which production's key never sees.
    await post(a, `/projects/${projectId}/environments/${staging}/webhooks`, {
      url: `${receiverUrl}/hooks/staging`,
      event_types: ['request.completed'],
    });

    for (let i = 0; i < 3; i++) {
      const disabled = await post(a, `/projects/${projectId}/environments/${production}/webhooks/${flapperId}/disable`, {});
      expect(disabled.body).toMatchObject({ status: 'disabled', disabled_reason: 'manual' });
      expect(
        (await patch(a, `/projects/${projectId}/environments/${production}/webhooks/${flapperId}`, { enabled: true })).body.status,
      ).toBe('enabled');
    }

    const deliveries = await eventually(
      async () => received.filter((r) => r.body.includes(flapperId)),
      (d) => d.length >= 3,
      30_000,
    );
    expect(deliveries).toHaveLength(3);
    for (const d of deliveries) {
      expect(signatureValid(d, watcher.body.secret)).toBe(true);
      expect(JSON.parse(d.body)).toMatchObject({ type: 'webhook.endpoint_disabled', data: { endpoint_id: flapperId, reason: 'manual' } });
    }
    expect(new Set(deliveries.map((d) => d.headers['webhook-id'])).size).toBe(3);

    // The endpoints of production, a page at a time.
    const first = await browserApi(prodKey, `${projectId}/environments/${production}/webhooks?limit=1`);
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(1);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await browserApi(
      prodKey,
      `${projectId}/environments/${production}/webhooks?limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`,
    );
    expect(second.body.items).toHaveLength(1);
    const ids = [...first.body.items, ...second.body.items].map((e: { id: string }) => e.id).sort();
    expect(ids).toEqual([watcherId, flapperId].sort());
    const third = second.body.next_cursor
      ? await browserApi(
          prodKey,
          `${projectId}/environments/${production}/webhooks?limit=1&cursor=${encodeURIComponent(second.body.next_cursor)}`,
        )
      : undefined;
    expect(third?.body.items ?? []).toEqual([]);
    const all = await browserApi(prodKey, `${projectId}/environments/${production}/webhooks`);
    expect(JSON.stringify(all.body)).not.toContain('secret-token');
    expect(JSON.stringify(all.body)).not.toContain('whsec_');

    // The watcher's deliveries, redacted, two pages.
    const d1 = await eventually(
      () => browserApi(prodKey, `${projectId}/environments/${production}/webhooks/${watcherId}/deliveries?limit=2`),
      (r) => r.status === 200 && r.body.items.length === 2 && r.body.next_cursor !== null,
    );
    const d2 = await browserApi(
      prodKey,
      `${projectId}/environments/${production}/webhooks/${watcherId}/deliveries?limit=2&cursor=${encodeURIComponent(d1.body.next_cursor)}`,
    );
    const attempts = [...d1.body.items, ...d2.body.items];
    expect(attempts).toHaveLength(3);
    for (const at of attempts) {
      expect(at).toMatchObject({ event_type: 'webhook.endpoint_disabled', outcome: 'delivered', status_code: 200, attempt: 1 });
      expect(Object.keys(at).sort()).toEqual([
        'attempt',
        'created_at',
        'error',
        'event_type',
        'id',
        'latency_ms',
        'message_id',
        'outcome',
        'response_excerpt',
        'status_code',
      ]);
    }
    expect(attempts.map((x: { message_id: string }) => x.message_id).sort()).toEqual(deliveries.map((d) => d.headers['webhook-id']).sort());
    expect((await browserApi(prodKey, `${projectId}/environments/${production}/webhooks?limit=0`)).status).toBe(422);
    expect((await browserApi(prodKey, `${projectId}/environments/${production}/webhooks?limit=101`)).status).toBe(422);
    for (const limit of ['0', '101', '2.5', 'x']) {
      const bad = await browserApi(prodKey, `${projectId}/environments/${production}/webhooks/${watcherId}/deliveries?limit=${limit}`);
      expect({ limit, status: bad.status, code: bad.body.code }).toEqual({ limit, status: 422, code: 'VALIDATION_FAILED' });
    }

    // Other credentials: the staging key (404), the tenant key (401), another tenant's project key (404), no key (401).
    expect((await browserApi(stagingKey, `${projectId}/environments/${production}/webhooks`)).status).toBe(404);
    expect((await browserApi(stagingKey, `${projectId}/environments/${production}/webhooks/${watcherId}/deliveries`)).status).toBe(404);
    // The staging key lists staging only; production's webhook id in staging's path is 404.
    const stagingList = await browserApi(stagingKey, `${projectId}/environments/${staging}/webhooks`);
    expect(stagingList.body.items.map((e: { environment_id: string }) => e.environment_id)).toEqual([staging]);
    expect((await browserApi(stagingKey, `${projectId}/environments/${staging}/webhooks/${watcherId}/deliveries`)).status).toBe(404);
    expect((await browserApi(a.apiKey, `${projectId}/environments/${production}/webhooks`)).status).toBe(401);
    expect((await gateway().get(`/api/v1/browser/projects/${projectId}/environments/${production}/webhooks`)).status).toBe(401);
    const bw = (await post(b, '/workspaces', { name: 'B', owner_user_id: 9 })).body.id as string;
    const bp = ((await post(b, `/workspaces/${bw}/projects`, { name: 'B', slug: 'b' })).headers['location'] as string).split('/').pop()!;
    const bEnv = (await get(b, `/projects/${bp}`)).body.environments[0].id as string;
    const bKey = (await post(b, `/projects/${bp}/environments/${bEnv}/api-keys`, {})).body.api_key as string;
    expect((await browserApi(bKey, `${projectId}/environments/${production}/webhooks`)).status).toBe(404);
    expect((await browserApi(bKey, `${bp}/environments/${bEnv}/webhooks`)).body).toEqual({ items: [], next_cursor: null });
    // A project key is not a tenant key.
    expect((await gateway().get('/api/v1/data/requests').set('X-API-Key', prodKey)).status).toBe(401);
    // Another tenant cannot manage tenant A's webhooks through its own scope.
    expect((await del(b, `/projects/${bp}/environments/${bEnv}/webhooks/${watcherId}`)).status).toBe(404);

    // Rotation answers a new secret; deletion removes the endpoint; revocation stops the key at once.
    const rotated = await post(a, `/projects/${projectId}/environments/${production}/webhooks/${watcherId}/rotate-secret`, {
      previous_valid_seconds: 0,
    });
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(watcher.body.secret);
    expect((await del(a, `/projects/${projectId}/environments/${production}/webhooks/${flapperId}`)).status).toBe(204);
    expect(
      (await browserApi(prodKey, `${projectId}/environments/${production}/webhooks`)).body.items.map((e: { id: string }) => e.id),
    ).toEqual([watcherId]);
    expect((await del(a, `/projects/${projectId}/environments/${production}/api-keys/${issued.body.id}`)).status).toBe(204);
    expect((await browserApi(prodKey, `${projectId}/environments/${production}/webhooks`)).status).toBe(401);
  }, 90_000);
});

describe("the browser-workflow API's pages and scopes", () => {
  const browserApi = (key: string, path: string) => gateway().get(`/api/v1/browser/projects/${path}`).set('X-API-Key', key);

  it("a webhook's deliveries come 50 to a page by default; a key of another project of the same tenant sees nothing of this one", async () => {
    const p = await post(a, `/workspaces/${workspaceId}/projects`, { name: 'Pages', slug: 'pages' });
    const pid = (p.headers['location'] as string).split('/').pop()!;
    const env = (await get(a, `/projects/${pid}`)).body.environments[0].id as string;
    const key = (await post(a, `/projects/${pid}/environments/${env}/api-keys`, {})).body.api_key as string;
    const base = `/projects/${pid}/environments/${env}/webhooks`;
    const watcher = await post(a, base, { url: `${receiverUrl}/hooks/pages-watcher`, event_types: ['webhook.endpoint_disabled'] });
    const watcherId = watcher.body.endpoint.id as string;
    const flapperId = (await post(a, base, { url: `${receiverUrl}/hooks/pages-flapper`, event_types: ['request.completed'] })).body.endpoint
      .id as string;
    // 51 disables: 51 notices, one delivery attempt each, to the watcher.
    for (let i = 0; i < 51; i++) {
      expect((await post(a, `${base}/${flapperId}/disable`, {})).status).toBe(200);
      expect((await patch(a, `${base}/${flapperId}`, { enabled: true })).status).toBe(200);
    }
    const first = await eventually(
      () => browserApi(key, `${pid}/environments/${env}/webhooks/${watcherId}/deliveries`),
      (r) => r.status === 200 && r.body.items.length === 50 && r.body.next_cursor !== null,
      60_000,
    );
    const rest = await eventually(
      () =>
        browserApi(key, `${pid}/environments/${env}/webhooks/${watcherId}/deliveries?cursor=${encodeURIComponent(first.body.next_cursor)}`),
      (r) => r.status === 200 && r.body.items.length === 1,
      30_000,
    );
    expect(rest.body.next_cursor).toBeNull();
    const ids = [...first.body.items, ...rest.body.items].map((x: { id: string }) => x.id);
    expect(new Set(ids).size).toBe(51);
    expect([...first.body.items, ...rest.body.items].every((x: { outcome: string }) => x.outcome === 'delivered')).toBe(true);
    // The endpoints' list takes the same default: both fit in one page.
    expect((await browserApi(key, `${pid}/environments/${env}/webhooks`)).body).toEqual({ items: expect.any(Array), next_cursor: null });

    // A key of the first project (same tenant, same workspace) on this project's paths: 404, never data.
    const otherKey = (await post(a, `/projects/${projectId}/environments/${production}/api-keys`, { label: 'other project' })).body
      .api_key as string;
    for (const path of [`${pid}/environments/${env}/webhooks`, `${pid}/environments/${env}/webhooks/${watcherId}/deliveries`]) {
      const r = await browserApi(otherKey, path);
      expect({ path, status: r.status, code: r.body.code, items: r.body.items }).toEqual({
        path,
        status: 404,
        code: 'NOT_FOUND',
        items: undefined,
      });
    }
    // Its own path with this project's webhook id: 404 too; its own list holds none of this project's endpoints.
    expect((await browserApi(otherKey, `${projectId}/environments/${production}/webhooks/${watcherId}/deliveries`)).status).toBe(404);
    const own = (await browserApi(otherKey, `${projectId}/environments/${production}/webhooks?limit=100`)).body.items.map(
      (e: { id: string }) => e.id,
    );
    expect(own).not.toContain(watcherId);
    expect(own).not.toContain(flapperId);
  }, 120_000);
});

describe('webhook management and Idempotency-Key', () => {
  it('replays creates, rotations, disables and deletes under their key; a replayed create or rotation omits the secret', async () => {
    const base = `/projects/${projectId}/environments/${production}/webhooks`;
    const body = { url: `${receiverUrl}/hooks/idem`, event_types: ['webhook.endpoint_disabled'] };
    const c1 = await post(a, base, body, 'hook-create-0001');
    expect(c1.status).toBe(201);
    expect(c1.body.secret).toMatch(/^whsec_/);
    const id = c1.body.endpoint.id as string;
    const c2 = await post(a, base, body, 'hook-create-0001');
    expect(c2.status).toBe(201);
    expect(c2.body).toEqual({ endpoint: expect.objectContaining({ id }) });
    expect((await post(a, base, { ...body, description: 'other' }, 'hook-create-0001')).body.code).toBe('IDEMPOTENCY_CONFLICT');
    const listed = (await get(a, `${base}?limit=100`)).body.items.filter(
      (e: { url_origin: string; event_types: string[] }) => e.event_types.length === 1 && e.event_types[0] === 'webhook.endpoint_disabled',
    );
    expect(listed.filter((e: { id: string }) => e.id === id)).toHaveLength(1);

    // One rotation, however often it is replayed: deliveries are signed with its secret.
    const r1 = await post(a, `${base}/${id}/rotate-secret`, { previous_valid_seconds: 0 }, 'hook-rotate-0001');
    expect(r1.body.secret).toMatch(/^whsec_/);
    expect(r1.body.secret).not.toBe(c1.body.secret);
    const r2 = await post(a, `${base}/${id}/rotate-secret`, { previous_valid_seconds: 0 }, 'hook-rotate-0001');
    expect(r2.body).toEqual({ endpoint: expect.objectContaining({ id }) });

    // A disable replayed under its key answers the same; the notice reaches the idem endpoint signed with the one new secret.
    const victim = (await post(a, base, { url: `${receiverUrl}/hooks/victim`, event_types: ['request.completed'] })).body.endpoint
      .id as string;
    const d1 = await post(a, `${base}/${victim}/disable`, {}, 'hook-disable-0001');
    expect(d1.body).toMatchObject({ id: victim, status: 'disabled' });
    expect((await post(a, `${base}/${victim}/disable`, {}, 'hook-disable-0001')).body).toEqual(d1.body);
    const notice = await eventually(
      async () => received.filter((r) => r.body.includes(victim) && r.body.includes('webhook.endpoint_disabled')),
      (rs) => rs.length >= 2, // the watcher (from above) and the idem endpoint
      30_000,
    );
    expect(notice.filter((r) => signatureValid(r, r1.body.secret))).toHaveLength(1);

    // Manual redelivery of that message: the same webhook-id and body again, a second attempt listed.
    const first = notice.find((r) => signatureValid(r, r1.body.secret))!;
    const webhookId = String(first.headers['webhook-id']);
    const redelivered = await post(a, `${base}/${id}/deliveries/${webhookId}/redeliver`, {});
    expect(redelivered.status).toBe(200);
    expect(redelivered.body).toMatchObject({ id: webhookId, status: 'pending', event_type: 'webhook.endpoint_disabled' });
    const again = await eventually(
      async () => received.filter((r) => r.headers['webhook-id'] === webhookId),
      (rs) => rs.length === 2,
      30_000,
    );
    expect(again[1]!.body).toBe(first.body);
    type Attempt = { message_id: string; attempt: number };
    const attempts = await eventually(
      async () => ((await get(a, `${base}/${id}/deliveries`)).body.items as Attempt[]).filter((x) => x.message_id === webhookId),
      (items) => items.length === 2,
      30_000,
    );
    expect(attempts.map((x) => x.attempt).sort()).toEqual([1, 2]);
    expect((await post(a, `${base}/${id}/deliveries/msg_${'0'.repeat(32)}/redeliver`, {})).status).toBe(404);
    expect((await post(a, `${base}/${id}/deliveries/not-a-webhook-id/redeliver`, {})).status).toBe(404);

    // Delete under a key: the replay answers 204 again; without the key the endpoint is gone (404).
    const del1 = gateway()
      .delete(`${B}${base}/${victim}`)
      .set('Authorization', `Bearer ${a.token}`)
      .set('Idempotency-Key', 'hook-delete-0001');
    expect((await del1).status).toBe(204);
    const del2 = gateway()
      .delete(`${B}${base}/${victim}`)
      .set('Authorization', `Bearer ${a.token}`)
      .set('Idempotency-Key', 'hook-delete-0001');
    expect((await del2).status).toBe(204);
    expect((await del(a, `${base}/${victim}`)).status).toBe(404);
  }, 60_000);
});

describe('webhook writes the dispatcher applied but the gateway did not commit', () => {
  /** While installed, the gateway's transaction fails when it stores a claim's answer (after webhook-dispatcher has answered). */
  const gatewaySql = (q: string) => withDatabase(fleet.databases.gateway.url, (c) => c.query(q));
  const failClaimAnswers = () =>
    gatewaySql(`CREATE OR REPLACE FUNCTION test_fail_claim() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'test: gateway commit fails'; END $$;
      CREATE TRIGGER test_fail_claim BEFORE UPDATE ON client_write_claims FOR EACH ROW WHEN (NEW.tenant_id = '${a.id}'::uuid) EXECUTE FUNCTION test_fail_claim();`);
  const commitAgain = () =>
    gatewaySql('DROP TRIGGER IF EXISTS test_fail_claim ON client_write_claims; DROP FUNCTION IF EXISTS test_fail_claim();');
  const keyed = (req: request.Test, key: string) => req.set('Authorization', `Bearer ${a.token}`).set('Idempotency-Key', key);

  it('a retry under the same Idempotency-Key answers what the dispatcher did: one rotation (its secret answered now), one deletion (204)', async () => {
    const base = `/projects/${projectId}/environments/${production}/webhooks`;
    const hook = await post(a, base, { url: `${receiverUrl}/hooks/lost-answers`, event_types: ['webhook.endpoint_disabled'] });
    const id = hook.body.endpoint.id as string;
    const gone = (await post(a, base, { url: `${receiverUrl}/hooks/lost-delete`, event_types: ['request.completed'] })).body.endpoint
      .id as string;
    const rotate = () =>
      keyed(gateway().post(`${B}${base}/${id}/rotate-secret`), 'hook-lost-rotate-01').send({ previous_valid_seconds: 3600 });
    const remove = () => keyed(gateway().delete(`${B}${base}/${gone}`), 'hook-lost-delete-01');

    await failClaimAnswers();
    try {
      expect((await rotate()).status).toBe(500);
      expect((await remove()).status).toBe(500);
    } finally {
      await commitAgain();
    }
    // webhook-dispatcher applied both; the gateway kept no claim.
    expect((await get(a, `${base}/${gone}`)).status).toBe(404);

    const retried = await rotate();
    expect(retried.status).toBe(200);
    expect(retried.body.secret).toMatch(/^whsec_/);
    expect(retried.body.secret).not.toBe(hook.body.secret);
    expect((await rotate()).body).toEqual({ endpoint: retried.body.endpoint }); // now the gateway's claim replays, without the secret
    expect((await remove()).status).toBe(204);
    expect((await remove()).status).toBe(204);

    // One rotation only: deliveries are signed with the answered secret and, beside it, the original
    // one (the previous secret). A second rotation would have left the undelivered secret as previous.
    const victim = (await post(a, base, { url: `${receiverUrl}/hooks/lost-victim`, event_types: ['request.completed'] })).body.endpoint
      .id as string;
    expect((await post(a, `${base}/${victim}/disable`, {})).status).toBe(200);
    const notice = await eventually(
      async () => received.filter((r) => r.body.includes(victim) && signatureValid(r, retried.body.secret)),
      (rs) => rs.length === 1,
      30_000,
    );
    expect(signatureValid(notice[0]!, hook.body.secret)).toBe(true);
  }, 60_000);
});

describe('running a workflow with the project+environment key', () => {
  const run = (key: string, path: string, idempotencyKey?: string) => {
    const r = gateway().post(`/api/v1/browser/projects/${path}`).set('X-API-Key', key);
    return idempotencyKey ? r.set('Idempotency-Key', idempotencyKey) : r;
  };
  const readRun = (key: string, path: string) => gateway().get(`/api/v1/browser/projects/${path}`).set('X-API-Key', key);

  it("runs the active version in the browser, delivers its events to its scope's endpoints only, and keeps within the budget cap", async () => {
    // A project whose cap holds one run at a time at the browser's base price of 5, then one more.
    const p = await post(a, `/workspaces/${workspaceId}/projects`, { name: 'Runs', slug: 'runs', budget_cap_tokens: 12 });
    const pid = (p.headers['location'] as string).split('/').pop()!;
    const [prod, stage] = (await get(a, `/projects/${pid}`)).body.environments.map((e: { id: string }) => e.id) as [string, string];
    const prodKey = (await post(a, `/projects/${pid}/environments/${prod}/api-keys`, {})).body.api_key as string;
    const stageKey = (await post(a, `/projects/${pid}/environments/${stage}/api-keys`, {})).body.api_key as string;
    const hook = await post(a, `/projects/${pid}/environments/${prod}/webhooks`, {
      url: `${receiverUrl}/hooks/runs-prod`,
      event_types: ['request.accepted', 'request.completed'],
    });
    await post(a, `/projects/${pid}/environments/${stage}/webhooks`, {
      url: `${receiverUrl}/hooks/runs-stage`,
      event_types: ['request.accepted', 'request.completed'],
    });
    // The first project's production endpoint (another project) must not see these runs either.
    await post(a, `/projects/${projectId}/environments/${production}/webhooks`, {
      url: `${receiverUrl}/hooks/other-project`,
      event_types: ['request.completed'],
    });

    const wf = (await post(a, `/projects/${pid}/workflows`, { name: 'render' })).body.id as string;
    // No active version yet: 409, nothing admitted.
    const early = await run(prodKey, `${pid}/environments/${prod}/workflows/${wf}/runs`);
    expect({ status: early.status, code: early.body.code }).toEqual({ status: 409, code: 'CONFLICT' });
    const v1 = (
      await post(a, `/workflows/${wf}/versions`, {
        definition: { url: `${site.url}/js-page`, wait_for_selector: '#rendered', result_text_selector: '#app' },
      })
    ).body;
    expect((await post(a, `/workflow-versions/${v1.id}/publish`, { revision: 1 })).status).toBe(204);
    expect((await post(a, `/workflows/${wf}/versions/${v1.id}/activate`, { workflow_version: 0 })).status).toBe(204);

    const first = await run(prodKey, `${pid}/environments/${prod}/workflows/${wf}/runs`, 'run-key-0001');
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({
      status: 'pending',
      route_mode: 'browser',
      base_tokens: 5,
      idempotent_replay: false,
      workflow_run: { project_id: pid, environment_id: prod, workflow_id: wf, workflow_version_id: v1.id },
    });
    const replay = await run(prodKey, `${pid}/environments/${prod}/workflows/${wf}/runs`, 'run-key-0001');
    expect(replay.body).toMatchObject({ id: first.body.id, idempotent_replay: true });
    // The tenant key is not a project key; another environment's key and another project's path are 404.
    expect((await run(a.apiKey, `${pid}/environments/${prod}/workflows/${wf}/runs`)).status).toBe(401);
    expect((await run(stageKey, `${pid}/environments/${prod}/workflows/${wf}/runs`)).status).toBe(404);

    // While the first run is unsettled it holds the whole room of the cap (it has no max_credits of its own).
    const held = await run(prodKey, `${pid}/environments/${prod}/workflows/${wf}/runs`);
    expect({ status: held.status, code: held.body.code }).toEqual({ status: 402, code: 'PROJECT_BUDGET_EXHAUSTED' });

    const done = await eventually(
      async () => (await readRun(prodKey, `${pid}/environments/${prod}/runs/${first.body.id}`)).body,
      (d) => d.token_state === 'settled' || d.token_state === 'refunded',
      90_000,
    );
    expect(done).toMatchObject({ status: 'completed', token_state: 'settled', workflow_run: { workflow_version_id: v1.id } });
    const text = await gateway().get(`/api/v1/data/requests/${first.body.id}/result?format=text`).set('X-API-Key', a.apiKey);
    expect(text.text).toContain('Rendered by JavaScript');
    expect((await readRun(stageKey, `${pid}/environments/${stage}/runs/${first.body.id}`)).status).toBe(404);

    // Its events reached production's endpoint, signed, carrying the scope; staging and the other project got none.
    const mine = await eventually(
      async () => received.filter((r) => r.headers['webhook-signature'] && r.body.includes(first.body.id)),
      (rs) => rs.some((r) => JSON.parse(r.body).type === 'request.completed'),
      30_000,
    );
    for (const r of mine) {
      expect(signatureValid(r, hook.body.secret)).toBe(true);
      expect(JSON.parse(r.body).data).toMatchObject({ request_id: first.body.id, project_id: pid, environment_id: prod });
    }
    expect(mine.map((r) => JSON.parse(r.body).type).sort()).toEqual(['request.accepted', 'request.completed']);

    // 12 - 5 charged = 7 left: one more run fits (ceiling 7), then 2 left is below the base price.
    const second = await run(prodKey, `${pid}/environments/${prod}/workflows/${wf}/runs`);
    expect(second.status).toBe(202);
    await eventually(
      async () => (await readRun(prodKey, `${pid}/environments/${prod}/runs/${second.body.id}`)).body,
      (d) => d.token_state === 'settled',
      90_000,
    );
    const third = await run(prodKey, `${pid}/environments/${prod}/workflows/${wf}/runs`);
    expect({ status: third.status, code: third.body.code }).toEqual({ status: 402, code: 'PROJECT_BUDGET_EXHAUSTED' });
    expect(third.body.details).toEqual([{ field: 'budget_cap_tokens', issue: '2 of 12 tokens left' }]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const elsewhere = received.filter((r) => r.body.includes(first.body.id) || r.body.includes(second.body.id)).map((r) => r.body);
    expect(elsewhere.every((b) => JSON.parse(b).data.environment_id === prod)).toBe(true);
    expect(received.filter((r) => r.body.includes(first.body.id))).toHaveLength(2);
  }, 240_000);

  it('a definition with max_credits_per_request holds only that much of the cap: runs fit side by side', async () => {
    const p = await post(a, `/workspaces/${workspaceId}/projects`, { name: 'Side by side', slug: 'side-by-side', budget_cap_tokens: 12 });
    const pid = (p.headers['location'] as string).split('/').pop()!;
    const env = (await get(a, `/projects/${pid}`)).body.environments[0].id as string;
    const key = (await post(a, `/projects/${pid}/environments/${env}/api-keys`, {})).body.api_key as string;
    const wf = (await post(a, `/projects/${pid}/workflows`, { name: 'capped' })).body.id as string;
    const v = (
      await post(a, `/workflows/${wf}/versions`, {
        definition: { url: `${site.url}/js-page`, wait_for_selector: '#rendered', max_credits_per_request: 6 },
      })
    ).body;
    await post(a, `/workflow-versions/${v.id}/publish`, { revision: 1 });
    await post(a, `/workflows/${wf}/versions/${v.id}/activate`, { workflow_version: 0 });
    // Each run holds its own ceiling (6) while it runs: two fit in 12, a third does not.
    const runs = [
      await run(key, `${pid}/environments/${env}/workflows/${wf}/runs`),
      await run(key, `${pid}/environments/${env}/workflows/${wf}/runs`),
    ];
    expect(runs.map((r) => r.status)).toEqual([202, 202]);
    const third = await run(key, `${pid}/environments/${env}/workflows/${wf}/runs`);
    expect([third.status, third.body.code]).toEqual([402, 'PROJECT_BUDGET_EXHAUSTED']);
    for (const r of runs)
      await eventually(
        async () => (await readRun(key, `${pid}/environments/${env}/runs/${r.body.id}`)).body,
        (d) => d.token_state === 'settled',
        90_000,
      );
  }, 240_000);

  it("a run with extraction reaches its scope's endpoint as extraction.completed once its extraction ended", async () => {
    const recipe = await gateway()
      .post('/api/v1/client/recipes')
      .set('Authorization', `Bearer ${a.token}`)
      .send({
        name: 'Run product',
        sample_url: `${site.url}/product`,
        activate: true,
        definition: { dsl_version: 1, fields: [{ name: 'title', type: 'string', required: true, selectors: ['h1.title'] }] },
      });
    expect(recipe.status).toBe(201);
    const p = await post(a, `/workspaces/${workspaceId}/projects`, { name: 'Extracting', slug: 'extracting' });
    const pid = (p.headers['location'] as string).split('/').pop()!;
    const env = (await get(a, `/projects/${pid}`)).body.environments[0].id as string;
    const key = (await post(a, `/projects/${pid}/environments/${env}/api-keys`, {})).body.api_key as string;
    const hook = await post(a, `/projects/${pid}/environments/${env}/webhooks`, {
      url: `${receiverUrl}/hooks/extracting`,
      event_types: ['extraction.completed', 'extraction.failed'],
    });
    expect(hook.status).toBe(201);
    const wf = (await post(a, `/projects/${pid}/workflows`, { name: 'extract' })).body.id as string;
    const v = (
      await post(a, `/workflows/${wf}/versions`, {
        definition: { url: `${site.url}/product`, skip_cache: true, extraction: { recipe_id: recipe.body.id as string } },
      })
    ).body;
    await post(a, `/workflow-versions/${v.id}/publish`, { revision: 1 });
    await post(a, `/workflows/${wf}/versions/${v.id}/activate`, { workflow_version: 0 });
    const started = await run(key, `${pid}/environments/${env}/workflows/${wf}/runs`);
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: 'waiting_for_page', result_kind: 'extraction' });
    const delivered = await eventually(
      async () => received.filter((r) => r.headers['webhook-signature'] && r.body.includes(started.body.id)).map((r) => JSON.parse(r.body)),
      (rs) => rs.length > 0,
      60_000,
    );
    expect(delivered).toHaveLength(1);
    expect(
      signatureValid(
        received.find((r) => r.body.includes(started.body.id))!,
        hook.body.secret,
      ),
    ).toBe(true);
    expect(delivered[0]).toMatchObject({
      type: 'extraction.completed',
      data: { request_id: started.body.id, project_id: pid, environment_id: env },
    });
    expect((await readRun(key, `${pid}/environments/${env}/runs/${started.body.id}`)).body).toMatchObject({
      status: 'completed',
      page_status: 'completed',
    });
  }, 120_000);

  it("a retried run stays a run of its project: its workflow_run, its scope's webhooks, and the project's budget cap", async () => {
    const p = await post(a, `/workspaces/${workspaceId}/projects`, { name: 'Retries', slug: 'retries', budget_cap_tokens: 7 });
    const pid = (p.headers['location'] as string).split('/').pop()!;
    const env = (await get(a, `/projects/${pid}`)).body.environments[0].id as string;
    const key = (await post(a, `/projects/${pid}/environments/${env}/api-keys`, {})).body.api_key as string;
    await post(a, `/projects/${pid}/environments/${env}/webhooks`, {
      url: `${receiverUrl}/hooks/retries`,
      event_types: ['request.failed'],
    });
    const wf = (await post(a, `/projects/${pid}/workflows`, { name: 'failing' })).body.id as string;
    const failing = (await post(a, `/workflows/${wf}/versions`, { definition: { url: `${site.url}/status/500`, skip_cache: true } })).body;
    await post(a, `/workflow-versions/${failing.id}/publish`, { revision: 1 });
    await post(a, `/workflows/${wf}/versions/${failing.id}/activate`, { workflow_version: 0 });
    const scope = { project_id: pid, environment_id: env, workflow_id: wf, workflow_version_id: failing.id };
    const until = (id: string, pred: (d: Record<string, unknown>) => boolean) =>
      eventually(async () => (await readRun(key, `${pid}/environments/${env}/runs/${id}`)).body as Record<string, unknown>, pred, 90_000);
    const refunded = (d: Record<string, unknown>) => d['token_state'] === 'refunded';

    const first = await run(key, `${pid}/environments/${env}/workflows/${wf}/runs`);
    expect(first.status).toBe(202);
    await until(first.body.id, refunded);

    // The retry (tenant key, data API) is a run of the same scope, readable as a run, its events at the scope's endpoint.
    const retry = await gateway().post(`/api/v1/data/requests/${first.body.id}/retry`).set('X-API-Key', a.apiKey);
    expect(retry.status).toBe(202);
    expect(retry.body).toMatchObject({ retried_from_id: first.body.id, workflow_run: scope });
    expect(await until(retry.body.id, refunded)).toMatchObject({ status: 'failed', workflow_run: scope });
    const delivered = await eventually(
      async () => received.filter((r) => r.body.includes(retry.body.id)).map((r) => JSON.parse(r.body)),
      (rs) => rs.length > 0,
      30_000,
    );
    expect(delivered[0]).toMatchObject({
      type: 'request.failed',
      data: { request_id: retry.body.id, project_id: pid, environment_id: env },
    });

    // A run that settles at 5 leaves 2 of the 7: a retry now does not fit the cap (it would have as a plain request).
    const ok = (
      await post(a, `/workflows/${wf}/versions`, { definition: { url: `${site.url}/page`, skip_cache: true, max_credits_per_request: 5 } })
    ).body;
    await post(a, `/workflow-versions/${ok.id}/publish`, { revision: 1 });
    await post(a, `/workflows/${wf}/versions/${ok.id}/activate`, { workflow_version: 1 });
    const paid = await run(key, `${pid}/environments/${env}/workflows/${wf}/runs`);
    expect(paid.status).toBe(202);
    await until(paid.body.id, (d) => d['token_state'] === 'settled');
    const capped = await gateway().post(`/api/v1/data/requests/${first.body.id}/retry`).set('X-API-Key', a.apiKey);
    expect([capped.status, capped.body.code]).toEqual([402, 'PROJECT_BUDGET_EXHAUSTED']);
  }, 240_000);
});

describe("a tenant's request lifecycle is mirrored on Kafka while it has a webhook endpoint", () => {
  const listeners = (tenantId: string) =>
    withDatabase(fleet.databases['fetch-orchestrator'].url, async (c) =>
      (
        await c.query<{ holder: string }>(`SELECT holder FROM lifecycle_listeners WHERE tenant_id = $1::uuid ORDER BY holder`, [tenantId])
      ).rows.map((r) => r.holder),
    );

  it('registered by its first endpoint, before the create answers; released with its last delete', async () => {
    // The dispatcher's sync at start ended the "every tenant" registration the orchestrator starts with.
    await eventually(
      () => listeners('00000000-0000-0000-0000-000000000000'),
      (h) => h.length === 0,
      30_000,
    );
    const c = await newTenant('workflows-listen');
    const w = await post(c, '/workspaces', { name: 'Listen', owner_user_id: 1 });
    const created = await post(c, `/workspaces/${w.body.id}/projects`, { name: 'Listen', slug: 'listen' });
    const project = (created.headers['location'] as string).split('/').pop()!;
    const [env] = (await get(c, `/workspaces/${w.body.id}/projects`)).body.items[0].environments.map((e: { id: string }) => e.id);
    const base = `/projects/${project}/environments/${env}/webhooks`;
    expect(await listeners(c.id)).toEqual([]);

    const first = await post(c, base, { url: `${receiverUrl}/hooks/listen-1`, event_types: ['request.completed'] });
    expect(first.status).toBe(201);
    expect(await listeners(c.id)).toEqual(['webhook-dispatcher']);
    const second = await post(c, base, { url: `${receiverUrl}/hooks/listen-2`, event_types: ['request.completed'] });
    expect(second.status).toBe(201);

    expect((await del(c, `${base}/${first.body.endpoint.id}`)).status).toBe(204);
    expect(await listeners(c.id)).toEqual(['webhook-dispatcher']); // one endpoint left
    expect((await del(c, `${base}/${second.body.endpoint.id}`)).status).toBe(204);
    expect(await listeners(c.id)).toEqual([]);
  }, 60_000);
});

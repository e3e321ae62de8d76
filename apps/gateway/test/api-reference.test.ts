import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { identityEnvOf } from '@wdr/testkit';
import { createApp } from '../src/app.js';
import { createGatewayDeps, type GatewayDeps } from '../src/deps.js';
import { escapeHtml, renderReferencePage } from '../src/api/reference.js';
import { loadGatewayEnv } from '../src/env.js';

/**
 * GET /api/v1/openapi.json and /api/v1/docs on the in-process gateway app: no key needed, the
 * committed document byte for byte, and a static page that lists every operation.
 * Neither route touches the database, Redis or Kafka (nothing is started here).
 */
let deps: GatewayDeps;
let app: ReturnType<typeof createApp>;

beforeAll(() => {
  deps = createGatewayDeps(
    loadGatewayEnv({
      ...identityEnvOf('gateway'),
      DATABASE_URL: 'postgresql://127.0.0.1:5432/postgres',
      API_KEY_PEPPER: 'test-pepper-not-secret-0123456789',
      LOG_LEVEL: 'silent',
    }),
  );
  app = createApp(deps);
});

afterAll(async () => {
  await deps?.db.$disconnect();
  deps?.redis.disconnect();
});

describe('API reference', () => {
  it('serves the committed OpenAPI document without a key', async () => {
    const res = await request(app).get('/api/v1/openapi.json').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const doc = JSON.parse(res.text) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths['/api/v1/data/requests'] ?? {})).toEqual(expect.arrayContaining(['get', 'post']));
    expect(doc.paths['/api/v1/data/requests/{id}/events/stream']).toBeDefined();
  });

  it('renders a static reference page of every operation, grouped by tag', async () => {
    const res = await request(app).get('/api/v1/docs').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    const html = res.text;
    expect(html).toMatch(/<span class="method post">POST<\/span> <code>\/api\/v1\/data\/requests<\/code>/);
    expect(html).toContain('<code>/api/v1/data/requests/{id}/events/stream</code>');
    expect(html).toContain('id="tag-data-api-requests"');
    expect(html).toContain('SubmissionResponse');
    expect(html).not.toMatch(/<script|<link|<img|src="|href="https?:/i);
    const doc = JSON.parse((await request(app).get('/api/v1/openapi.json')).text) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.values(doc.paths).flatMap((item) => Object.keys(item)).length;
    expect(html.match(/<section class="op"/g)).toHaveLength(operations);
  });

  it('escapes every string taken from the document', () => {
    const html = renderReferencePage({
      openapi: '3.0.0',
      info: { title: '<script>alert(1)</script>', version: '1' },
      paths: {
        '/x/<img src=x>': {
          get: {
            tags: ['"tag"'],
            summary: 'a & b',
            parameters: [{ name: '<p>', in: 'query' }],
            responses: { '200': { description: '<b>ok</b>' } },
          },
        },
      },
    });
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b>ok</b>');
    expect(html).toContain(escapeHtml('<script>alert(1)</script>'));
    expect(html).toContain('a &amp; b');
  });
});

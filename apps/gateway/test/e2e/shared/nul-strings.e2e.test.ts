import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { adminCommand, sharedFleet, type Fleet } from '@wdr/testkit';

/**
 * U+0000 in what a tenant writes, through the public API on the real fleet. Postgres stores no NUL
 * in text or jsonb, so such a string could only fail where a service writes it (a recipe's name
 * reached the extractor's insert and came back as a 5xx). The gateway refuses it first, on every
 * route: a 422 VALIDATION_FAILED naming where, and nothing written.
 */
let fleet: Fleet;
let token: string;
let apiKey: string;
const gw = () => request(fleet.url('gateway'));
const client = () => ({ Authorization: `Bearer ${token}` });
const RULES = { dsl_version: 1, fields: [{ name: 'heading', type: 'string', required: true, selectors: ['h1'] }] };
/** Never fetched by these tests: every body is refused before, or stored without a fetch. */
const SAMPLE = 'http://127.0.0.1/product';
const NUL_ISSUE = 'must not contain the NUL character (U+0000)';

beforeAll(async () => {
  fleet = sharedFleet();
  const t = await adminCommand(fleet, ['create-tenant', '--name', `nul-${randomUUID()}`, '--credits', '100']);
  apiKey = t['api_key'] as string;
  token = (await adminCommand(fleet, ['issue-cabinet-token', '--tenant', t['tenant_id'] as string]))['cabinet_token'] as string;
});

const fieldsOf = (res: request.Response) => (res.body as { details?: { field: string; issue: string }[] }).details ?? [];

describe('U+0000 in a tenant-written string', () => {
  it('is refused in a body value outside the submission schema (a recipe name), and nothing is stored', async () => {
    const res = await gw()
      .post('/api/v1/client/recipes')
      .set(client())
      .send({ name: 'Shoes\u0000', sample_url: SAMPLE, definition: RULES });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(fieldsOf(res)).toEqual([{ field: 'name', issue: NUL_ISSUE }]);
    const listed = await gw().get('/api/v1/client/recipes').set(client());
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ total: 0, items: [] });
    // The same recipe without the NUL is created: the refusal was that character's.
    const created = await gw().post('/api/v1/client/recipes').set(client()).send({ name: 'Shoes', sample_url: SAMPLE, definition: RULES });
    expect(created.status).toBe(201);
  });

  it('is refused in a key and in a nested value, each named by its path', async () => {
    const res = await gw()
      .post('/api/v1/client/recipes')
      .set(client())
      .send({
        name: 'Boots',
        sample_url: SAMPLE,
        definition: { ...RULES, fields: [{ ...RULES.fields[0], selectors: ['h1', 'h\u00002'] }] },
        ['x\u0000']: 1,
      });
    expect(res.status).toBe(422);
    expect(
      fieldsOf(res)
        .map((d) => d.field)
        .sort(),
    ).toEqual(['definition.fields.0.selectors.1', 'x\u0000'].sort());
  });

  it('is refused in the query string and in the path', async () => {
    const query = await gw().get('/api/v1/data/requests?cursor=%00').set('X-API-Key', apiKey);
    expect(query.status).toBe(422);
    expect(fieldsOf(query)).toEqual([{ field: 'query.cursor', issue: NUL_ISSUE }]);
    const path = await gw().get('/api/v1/client/recipes/a%00b').set(client());
    expect(path.status).toBe(422);
    expect(fieldsOf(path)).toEqual([{ field: 'path', issue: NUL_ISSUE }]);
  });
});

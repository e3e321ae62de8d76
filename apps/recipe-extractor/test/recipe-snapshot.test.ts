import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, identityEnvOf, type TestDatabase } from '@wdr/testkit';
import { createExtractorDeps, type ExtractorDeps } from '../src/app.js';
import { loadExtractorEnv } from '../src/env.js';
import type { PrismaClient } from '../src/generated/prisma/client.js';
import { readRecipe, readRecipeSnapshot } from '../src/domain/recipe-views.js';
import { createRecipe, createVersion } from '../src/domain/recipe-writes.js';

/**
 * A recipe read is three queries (the recipe, its versions, its repairs), and an automatic repair
 * commits a version, its activation and its own ending together. Against Postgres: a write that
 * commits right after the read's first query (forced by a hook on that query) is seen whole or not
 * at all by readRecipeSnapshot; the plain three-query read shows half of it.
 */
let database: TestDatabase;
let deps: ExtractorDeps;

beforeAll(async () => {
  database = await createTestDatabase('recipe-extractor');
  deps = createExtractorDeps(loadExtractorEnv({ ...identityEnvOf('recipe-extractor'), DATABASE_URL: database.url, LOG_LEVEL: 'silent' }));
});

afterAll(async () => {
  await deps?.db.$disconnect();
  await database?.drop();
});

const claim = () => ({ key_id: randomUUID(), input_hash: 'a'.repeat(64) });
const definition = (selector: string) => ({
  dsl_version: 1,
  fields: [{ name: 'title', type: 'string', required: true, selectors: [selector] }],
});

/** The client, with `between` run (on another connection, committed) right after each read's first query of the recipe row. */
function withCommitAfterFirstQuery(between: () => Promise<void>): PrismaClient {
  let armed = true;
  return deps.db.$extends({
    query: {
      recipe: {
        async findUnique({ args, query }) {
          const found = await query(args);
          if (armed) {
            armed = false;
            await between();
          }
          return found;
        },
      },
    },
  }) as unknown as PrismaClient;
}

describe('reading a recipe while a new version is activated', () => {
  const writes = () => ({ db: deps.db, limits: deps.limits });

  async function recipeWithOneVersion(tenantId: string) {
    const r = await createRecipe(writes(), tenantId, claim(), {
      name: 'Snap',
      sample_url: 'http://shop.example/p',
      definition: definition('h1'),
      activate: true,
    });
    return { id: r.id, v1: r.active_version_id! };
  }
  const activateNew = (tenantId: string, id: string) => async () => {
    await createVersion(writes(), tenantId, id, claim(), { definition: definition('h2'), activate: true });
  };

  it('readRecipeSnapshot sees the recipe as it was when the read began: its active version among its versions, nothing of the later commit', async () => {
    const tenantId = randomUUID();
    const { id, v1 } = await recipeWithOneVersion(tenantId);
    const seen = await readRecipeSnapshot(withCommitAfterFirstQuery(activateNew(tenantId, id)), tenantId, id);
    expect(seen.active_version_id).toBe(v1);
    expect(seen.versions.map((v) => v.id)).toEqual([v1]);
    // The commit did happen: the next read sees it whole.
    const after = await readRecipeSnapshot(deps.db, tenantId, id);
    expect(after.versions).toHaveLength(2);
    expect(after.active_version_id).toBe(after.versions[0]!.id);
    expect(after.versions.map((v) => v.id)).toContain(after.active_version_id);
  });

  it('the plain read, outside a snapshot, shows half of such a commit (why the API reads through the snapshot)', async () => {
    const tenantId = randomUUID();
    const { id, v1 } = await recipeWithOneVersion(tenantId);
    const seen = await readRecipe(withCommitAfterFirstQuery(activateNew(tenantId, id)), tenantId, id);
    expect(seen.active_version_id).toBe(v1);
    expect(seen.versions).toHaveLength(2);
  });
});

import type { Sealer } from '@wdr/kit/sealing';
import type { PrismaClient } from '../../generated/prisma/client.js';

/**
 * The tenant's secrets among a request's options: header values (`Authorization`, ...), cookie
 * values and the browser actions (what `fill` fills, `type` types, `select` selects, `press`
 * presses). They are sealed at rest like the target URL (the same key ring, TARGET_URL_KEY, and
 * rotation) in `data_requests.secrets_sealed`, and purged with it after TARGET_URL_RETENTION_HOURS.
 *
 * The `options` column keeps what details and lists show: `header_names`, `cookie_names` and
 * `browser_action_steps` (each action's type, selector and shape, no value). A row stored before
 * sealing (the "clear" form: `headers`, `cookies` or `browser_actions` in `options`) is read as it
 * is and sealed by the retention pass (`sealClearInputs`): the migration cannot seal, SQL has no key.
 */
export const SECRET_OPTIONS = ['headers', 'cookies', 'browser_actions'] as const;

/** The additional data a request's sealed inputs are bound to: another request's (or its URL's) sealed form does not open as these. */
const sealContext = (requestId: string) => `request-inputs:${requestId}`;

/** What an action shows in a detail or a list: its type, selector and shape, never what it types, fills, selects or presses. */
const ACTION_ECHO_FIELDS = new Set(['type', 'selector', 'optional', 'delay_ms', 'to', 'y', 'ms', 'timeout_ms', 'visible']);

export function actionEcho(a: unknown): unknown {
  if (typeof a !== 'object' || a === null) return a;
  return Object.fromEntries(Object.entries(a).filter(([k]) => ACTION_ECHO_FIELDS.has(k)));
}

type Options = Record<string, unknown>;

/** A row in the clear form: secrets in `options` (stored before sealing, or not yet sealed by the retention pass). */
export function isClearForm(options: unknown): boolean {
  const o = (options ?? {}) as Options;
  return SECRET_OPTIONS.some((k) => o[k] !== undefined);
}

/**
 * Split submitted options into what is stored in clear (names and action steps) and the sealed
 * secrets (null when the request has none).
 */
export function sealInputs(sealer: Sealer, requestId: string, options: Options): { options: Options; secretsSealed: string | null } {
  const { headers, cookies, browser_actions: actions, ...rest } = options;
  const secrets: Options = {};
  const shown: Options = { ...rest };
  if (headers !== undefined && headers !== null) {
    secrets['headers'] = headers;
    shown['header_names'] = Object.keys(headers as object);
  }
  if (cookies !== undefined && cookies !== null) {
    secrets['cookies'] = cookies;
    shown['cookie_names'] = Object.keys(cookies as object);
  }
  if (actions !== undefined && actions !== null) {
    secrets['browser_actions'] = actions;
    shown['browser_action_steps'] = Array.isArray(actions) ? actions.map(actionEcho) : [];
  }
  if (Object.keys(secrets).length === 0) return { options: shown, secretsSealed: null };
  return { options: shown, secretsSealed: sealer.seal(JSON.stringify(secrets), sealContext(requestId)) };
}

/** How a new request's options are stored: sealed, or in clear while SEAL_REQUEST_INPUTS is false. */
export function storedInputs(
  deps: { sealer: Sealer; sealRequestInputs: boolean },
  requestId: string,
  options: Options,
): { options: Options; secretsSealed: string | null } {
  return deps.sealRequestInputs ? sealInputs(deps.sealer, requestId, options) : { options, secretsSealed: null };
}

/** The sealed inputs were purged (retention) while the request still needed them. */
export class InputsPurgedError extends Error {
  constructor() {
    super('the sealed inputs of this request passed their retention');
    this.name = 'InputsPurgedError';
  }
}

/**
 * The options as submitted (secrets included), for the stage that needs them: the HTTP stage, the
 * render-job start answer, the result cache's key and a retry. Never for a view.
 */
export function openInputs(sealer: Sealer, row: { id: string; options: unknown; secretsSealed: string | null }): Options {
  const o = (row.options ?? {}) as Options;
  if (isClearForm(o)) return o;
  const { header_names: headerNames, cookie_names: cookieNames, browser_action_steps: steps, ...rest } = o;
  if (row.secretsSealed === null) {
    if (headerNames !== undefined || cookieNames !== undefined || steps !== undefined) throw new InputsPurgedError();
    return rest;
  }
  return { ...rest, ...(JSON.parse(sealer.open(row.secretsSealed, sealContext(row.id))) as Options) };
}

/**
 * What a detail or a list shows of a request's options, from either form: header and cookie names,
 * the actions' types and selectors; never a value.
 */
export function shownInputs(options: unknown): Options {
  const o = { ...((options ?? {}) as Options) };
  if (!isClearForm(o)) {
    const { browser_action_steps: steps, ...rest } = o;
    return steps === undefined ? rest : { ...rest, browser_actions: steps };
  }
  const { headers, cookies, browser_actions: actions, ...rest } = o;
  return {
    ...rest,
    ...(Array.isArray(actions) ? { browser_actions: actions.map(actionEcho) } : {}),
    ...(headers ? { header_names: Object.keys(headers as object) } : {}),
    ...(cookies ? { cookie_names: Object.keys(cookies as object) } : {}),
  };
}

/** Requests still holding inputs in clear, at most $1 (read from a partial index of only those: retention-plans.test.ts). */
export const CLEAR_INPUTS_SQL = `SELECT id::text AS id, options FROM data_requests
  WHERE options ?| array['headers', 'cookies', 'browser_actions'] LIMIT $1`;

/**
 * Seal the rows still in the clear form (stored before sealing), at most `limit` per call: a row
 * whose target URL is still kept gets its secrets sealed; a row whose URL was already purged loses
 * them (the names and action steps stay). Guarded on the clear form, so two replicas (or a pass and
 * a new version of the row) never seal twice. Returns how many rows it changed.
 */
export async function sealClearInputs(db: PrismaClient, sealer: Sealer, limit = 500): Promise<number> {
  const rows = await db.$queryRawUnsafe<{ id: string; options: Options }[]>(CLEAR_INPUTS_SQL, limit);
  let changed = 0;
  for (const r of rows) {
    const sealed = sealInputs(sealer, r.id, r.options);
    changed += await db.$executeRaw`
      UPDATE data_requests SET options = ${JSON.stringify(sealed.options)}::jsonb,
             secrets_sealed = CASE WHEN target_sealed IS NULL THEN NULL ELSE ${sealed.secretsSealed} END
       WHERE id = ${r.id}::uuid AND options ?| array['headers', 'cookies', 'browser_actions']`;
  }
  return changed;
}

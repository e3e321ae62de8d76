import { z } from 'zod';
import { endpoint } from './endpoint.js';

/**
 * A rendered page travels from browser-renderer to fetch-orchestrator as raw bytes, never as
 * base64 in JSON: before it hands the outcome back (POST RENDER_PATHS.result, small JSON), the
 * renderer sends the page with POST {@link renderUploadApi.renderJobUpload}:
 *
 *   - the body is `application/octet-stream`: the rendered document's bytes followed by its
 *     readable text's (UTF-8), `Content-Length` their sum, and {@link RENDER_UPLOAD_DIGEST_HEADER}
 *     the SHA-256 (hex) of all of it;
 *   - `:upload` is a UUID the renderer draws for this hand-back (a repeated hand-back draws a new one);
 *   - the orchestrator streams the bytes into its result store's staging area as they arrive,
 *     hashing them on the way, and keeps them only when the length and the digest are the declared
 *     ones (else 422 VALIDATION_FAILED, nothing kept);
 *   - the outcome then names the upload ({@link RenderUploadRef}) with the same length split and
 *     digest; the orchestrator moves the staged bytes into the request's result in the transaction
 *     that finishes it, and refuses a reference that does not match what it staged.
 *
 * A request already terminal answers `skip` without reading the body (a repeated job), as the
 * claim does.
 */
export const RENDER_UPLOAD_DIGEST_HEADER = 'x-content-sha256';

/**
 * The one-call hand-back (`orchestratorApi.renderJobHandBack`): the completed outcome rides
 * in this header beside the page's bytes, as base64url of its JSON (the `RenderResult` the result
 * route takes, naming this very upload). At most {@link RENDER_OUTCOME_HEADER_MAX} characters: an
 * outcome that does not fit (a target's long Content-Type can make one; a header is no place for an
 * unbounded value) is handed back in two calls, the upload and then the result.
 */
export const RENDER_OUTCOME_HEADER = 'x-render-outcome';
export const RENDER_OUTCOME_HEADER_MAX = 8192;

const count = z.number().int().min(0);
const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

/** The staged upload a completed outcome hands over: its id, how its bytes split, and their digest. */
export const RenderUploadRef = z.object({
  upload_id: z.uuid(),
  /** The rendered document: the first `body_bytes` of the upload. */
  body_bytes: count,
  /** The readable text (UTF-8): the `text_bytes` after it. */
  text_bytes: count,
  /** SHA-256 (hex) of the whole upload, as sent in RENDER_UPLOAD_DIGEST_HEADER. */
  sha256: sha256Hex,
});
export type RenderUploadRef = z.infer<typeof RenderUploadRef>;

export const RenderUploadAnswer = z.discriminatedUnion('state', [
  /** Staged, with the length and digest the orchestrator measured (the declared ones). */
  z.object({ state: z.literal('stored'), bytes: count, sha256: sha256Hex }),
  /** The request is already terminal: nothing was read or kept; hand nothing back. */
  z.object({ state: z.literal('skip'), status: z.string() }),
]);
export type RenderUploadAnswer = z.infer<typeof RenderUploadAnswer>;

/** The upload route of fetch-orchestrator, served beside `orchestratorApi` (services.ts joins them). */
export const renderUploadApi = {
  /** browser-renderer sends a rendered page as bytes (see above); the answer is JSON. */
  renderJobUpload: endpoint<RenderUploadAnswer>()({
    method: 'POST',
    callers: ['browser-renderer'],
    route: '/internal/v1/render-jobs/:id/uploads/:upload',
    params: { id: z.uuid(), upload: z.uuid() },
    bodyKind: 'bytes',
  }),
} as const;

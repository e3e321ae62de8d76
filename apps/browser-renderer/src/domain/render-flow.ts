import { createHash, randomUUID } from 'node:crypto';
import {
  orchestratorApi,
  RenderCaptchaAnswer,
  RENDER_OUTCOME_HEADER,
  RENDER_OUTCOME_HEADER_MAX,
  RENDER_PATHS,
  RENDER_UPLOAD_DIGEST_HEADER,
  RenderResultAnswer,
  RenderStartAnswer,
  RenderUploadAnswer,
  renderUploadApi,
} from '@wdr/contracts';
import { callInternal, sendBytesInternal } from '@wdr/kit/internal-call';
import { Semaphore } from '@wdr/kit/semaphore';
import type { RendererDeps } from '../deps.js';
import { BrowserCrashedError, BrowserUnavailableError } from './browser-pool.js';
import type { CaptchaHooks } from './captcha.js';
import { storeDebugArtifacts } from './debug-artifacts.js';
import { renderJob, type RenderOutcome, type RenderOutput } from './render-job.js';

/** A crash costs the attempt; the second crash of the same job ends it (a page that kills Chromium every time). */
const RENDER_ATTEMPTS = 2;

/** What one render job needs: the orchestrator (claim, CAPTCHA authorization, hand-back), the pool, the artifact store. */
export type RenderFlowDeps = Pick<
  RendererDeps,
  'orchestrator' | 'pool' | 'policy' | 'captchaSolver' | 'db' | 'artifactSealer' | 'log' | 'metrics' | 'env'
>;

/**
 * The render of one requested job, from claim to hand-back: claim the job from the orchestrator
 * (`skip` when the request is already terminal), render it (a browser crash costs one attempt),
 * keep the debug artifacts of a failure when asked, and hand the outcome back. Safe to repeat:
 * before the hand-back it renders again; after it, the claim answers `skip`, so nothing repeats.
 */
export function renderFlow(deps: RenderFlowDeps): (requestId: string) => Promise<RenderOutcome | 'skipped'> {
  const durations = deps.metrics.histogram(
    'render_duration_seconds',
    'Render duration, by outcome (completed or the failure code).',
    ['outcome'],
    [0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120],
  );
  const blocked = deps.metrics.counter(
    'blocked_requests_total',
    'Page requests blocked by the resource policy or the target policy, by resource type.',
    ['resource_type'],
  );
  // The pool's page slots, held for the render alone: not through the claim before it, nor the
  // hand-back after it. The consumer takes more jobs than there are slots (app.ts), so a job claims
  // while every slot renders and starts the moment one frees, and the last one is handed back while
  // the next renders; the claim's round trip to the orchestrator held a slot idle on every page
  // (some 3 % of its time at four pages a second). A job claimed and waiting here waits for one
  // render at most (the consumer's extra jobs are a quarter of the slots); its render's own deadline
  // starts with the render.
  const slots = new Semaphore(deps.pool.slots);
  return async (requestId) => {
    const asked = performance.now();
    const claim = RenderStartAnswer.parse(await deps.orchestrator.post(RENDER_PATHS.start(requestId), {}));
    if (claim.state === 'skip') return 'skipped';
    const job = claim.job;
    const claimed = performance.now();
    const { result, t0 } = await slots.use(async () => {
      const t0 = performance.now();
      const captcha: CaptchaHooks = {
        solver: deps.captchaSolver,
        authorize: async (kind, solvesSoFar, trafficBytes) =>
          RenderCaptchaAnswer.parse(
            await callInternal(deps.orchestrator, orchestratorApi.renderJobCaptcha, {
              params: { id: requestId },
              body: {
                captcha_kind: kind,
                solves_so_far: solvesSoFar,
                ...(trafficBytes !== undefined ? { traffic_bytes: trafficBytes } : {}),
              },
              // The orchestrator asks the ledger in turn.
              timeoutMs: 15_000,
            }),
          ),
        solved: async (kind, solves) => {
          await callInternal(deps.orchestrator, orchestratorApi.renderJobCaptchaSolved, {
            params: { id: requestId },
            body: { captcha_kind: kind, solves },
          });
        },
      };
      let output: RenderOutput | undefined;
      for (let attempt = 1; !output; attempt++) {
        try {
          output = await renderJob(deps.pool, job, deps.policy, { captcha, log: deps.log });
        } catch (err) {
          if (err instanceof BrowserCrashedError && attempt < RENDER_ATTEMPTS) {
            deps.log.warn({ requestId, attempt }, 'browser crashed during the render; trying again in a fresh browser');
            continue;
          }
          // Whatever else went wrong in the browser ends this request (refunded) rather than
          // leaving it running while the message is retried into the DLQ.
          const crashed = err instanceof BrowserCrashedError;
          const unavailable = err instanceof BrowserUnavailableError;
          if (!crashed && !unavailable) deps.log.error({ err, requestId }, 'render failed unexpectedly');
          output = {
            result: {
              outcome: 'failed',
              code: crashed ? 'BROWSER_CRASHED' : unavailable ? 'BROWSER_UNAVAILABLE' : 'RENDER_FAILED',
              message: crashed
                ? 'The browser crashed while rendering the page.'
                : unavailable
                  ? 'No browser was available to render the page.'
                  : 'The page could not be rendered.',
              caused_by: 'platform',
            },
          };
        }
      }
      let result: RenderOutcome = output.result;
      if (result.outcome === 'failed' && output.evidence && job.options.debug_artifacts) {
        const listing = await storeDebugArtifacts(
          { db: deps.db, sealer: deps.artifactSealer, retentionHours: deps.env.DEBUG_ARTIFACT_RETENTION_HOURS },
          { requestId, tenantId: job.tenant_id },
          output.evidence,
        );
        result = { ...result, debug_artifacts: listing };
      }
      durations.observe({ outcome: result.outcome === 'completed' ? 'completed' : result.code }, (performance.now() - t0) / 1000);
      for (const [type, n] of Object.entries(result.meta?.resource_policy?.blocked_requests ?? {})) blocked.inc({ resource_type: type }, n);
      return { result, t0 };
    });
    const rendered = performance.now();
    await handBack(deps.orchestrator, requestId, result);
    // Where the job's time went: the claim, the wait for a page slot, the render (with its artifacts), the hand-back.
    const ms = (from: number, to: number) => Math.round(to - from);
    deps.log.info(
      {
        requestId,
        outcome: result.outcome,
        ms: ms(t0, performance.now()),
        claimMs: ms(asked, claimed),
        slotWaitMs: ms(claimed, t0),
        renderMs: ms(t0, rendered),
        handBackMs: ms(rendered, performance.now()),
      },
      'render finished',
    );
    return result;
  };
}

/**
 * Hand a render's outcome back to the orchestrator. A completed page travels as bytes (its
 * document, then its text as UTF-8, with their SHA-256: renderUploadApi in @wdr/contracts), which
 * the orchestrator streams into its result store, with the outcome naming that upload in a header:
 * one call. An outcome too large for the header follows the upload as small JSON instead (two
 * calls). A failure is small JSON alone. A repeated hand-back (the job retried after a crash or a
 * timeout) draws a new upload id; the orchestrator finishes a request once and ignores the rest.
 */
export async function handBack(
  orchestrator: RenderFlowDeps['orchestrator'],
  requestId: string,
  outcome: RenderOutcome,
): Promise<RenderResultAnswer> {
  if (outcome.outcome === 'failed') {
    return RenderResultAnswer.parse(
      await callInternal(orchestrator, orchestratorApi.renderJobResult, { params: { id: requestId }, body: outcome, timeoutMs: 30_000 }),
    );
  }
  const { body, text, ...rest } = outcome;
  // Postgres text holds no NUL character: a page's text loses its NULs rather than failing to store.
  const textBytes = Buffer.from(text.includes('\0') ? text.replaceAll('\0', '') : text, 'utf8');
  const sha256 = createHash('sha256').update(body).update(textBytes).digest('hex');
  const uploadId = randomUUID();
  const upload = { upload_id: uploadId, body_bytes: body.length, text_bytes: textBytes.length, sha256 };
  const outcomeHeader = Buffer.from(JSON.stringify({ ...rest, upload })).toString('base64url');
  if (outcomeHeader.length <= RENDER_OUTCOME_HEADER_MAX) {
    // One call: the bytes, and the outcome naming them in a header.
    return RenderResultAnswer.parse(
      await sendBytesInternal(orchestrator, orchestratorApi.renderJobHandBack, {
        params: { id: requestId, upload: uploadId },
        body: [body, textBytes],
        headers: { [RENDER_UPLOAD_DIGEST_HEADER]: sha256, [RENDER_OUTCOME_HEADER]: outcomeHeader },
        // Up to MAX_RESULT_BYTES and its text; the orchestrator may ask the ledger about the page's traffic.
        timeoutMs: 60_000,
      }),
    );
  }
  const stored = RenderUploadAnswer.parse(
    await sendBytesInternal(orchestrator, renderUploadApi.renderJobUpload, {
      params: { id: requestId, upload: uploadId },
      body: [body, textBytes],
      headers: { [RENDER_UPLOAD_DIGEST_HEADER]: sha256 },
      // Up to MAX_RESULT_BYTES and its text, written to the result store as they arrive.
      timeoutMs: 60_000,
    }),
  );
  if (stored.state === 'skip') return { accepted: false, status: stored.status };
  return RenderResultAnswer.parse(
    await callInternal(orchestrator, orchestratorApi.renderJobResult, {
      params: { id: requestId },
      body: { ...rest, upload },
      // The orchestrator may ask the ledger whether the page's proxy traffic fits the ceiling.
      timeoutMs: 30_000,
    }),
  );
}

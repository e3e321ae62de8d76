import { Router, type Request } from 'express';
import { parseOrThrow as parse } from '@wdr/kit/errors';
import { orchestratorApi as api, RENDER_OUTCOME_HEADER, RENDER_UPLOAD_DIGEST_HEADER, renderUploadApi } from '@wdr/contracts';
import type { OrchestratorDeps } from '../deps.js';
import { authorizeCaptchaSolve, captchaSolved } from '../domain/render-captcha.js';
import { acceptRenderResult, startRenderJob } from '../domain/render-jobs.js';
import { handBackOutcome, receiveWholeUpload, stageRenderUpload, type DeclaredUpload } from '../domain/render-uploads.js';

/** Internal routes browser-renderer calls for each render job (contract: @wdr/contracts RENDER_PATHS, orchestratorApi). */
export function renderJobRoutes(deps: OrchestratorDeps, onCommitted: () => void): Router {
  const r = Router();
  const renderDeps = {
    db: deps.db,
    sql: deps.sql,
    ledger: deps.ledger,
    sealer: deps.sealer,
    maxResultBytes: deps.env.MAX_RESULT_BYTES,
    resultRetentionHours: deps.env.RESULT_RETENTION_HOURS,
    resultCache: deps.resultCache,
    routes: deps.routes,
  };
  const uploadDeps = { db: deps.db, uploads: deps.uploads, maxResultBytes: deps.env.MAX_RESULT_BYTES };
  r.post(api.startRenderJob.route, async (req, res) => {
    const answer = await startRenderJob(renderDeps, parse(api.startRenderJob.params.id, req.params['id']));
    onCommitted();
    res.json(answer);
  });
  // The page's bytes, streamed into the staging area as they arrive (never parsed as JSON).
  r.post(renderUploadApi.renderJobUpload.route, async (req, res) => {
    const { params } = renderUploadApi.renderJobUpload;
    const id = parse(params.id, req.params['id']);
    const upload = parse(params.upload, req.params['upload']);
    res.json(await stageRenderUpload(uploadDeps, id, upload, declaredUpload(req), req));
  });
  // A completed render in one call: the page's bytes, and its outcome in a header (render-uploads.ts).
  r.post(api.renderJobHandBack.route, async (req, res) => {
    const { params } = api.renderJobHandBack;
    const id = parse(params.id, req.params['id']);
    const upload = parse(params.upload, req.params['upload']);
    const declared = declaredUpload(req);
    // The outcome is checked before a byte of the body is read.
    const result = handBackOutcome(req.header(RENDER_OUTCOME_HEADER), upload, declared);
    // A page within one chunk is stored from memory by the finishing move; a larger one is staged.
    const staged =
      (await receiveWholeUpload(uploadDeps, declared, req)) ?? (await stageRenderUpload(uploadDeps, id, upload, declared, req));
    if (staged.state === 'skip') {
      res.json({ accepted: false, status: staged.status });
      return;
    }
    const answer = await acceptRenderResult(renderDeps, id, result, staged);
    if (answer.accepted) onCommitted();
    res.json(answer);
  });
  r.post(api.renderJobResult.route, async (req, res) => {
    const id = parse(api.renderJobResult.params.id, req.params['id']);
    const answer = await acceptRenderResult(renderDeps, id, parse(api.renderJobResult.body, req.body));
    if (answer.accepted) onCommitted();
    res.json(answer);
  });
  r.post(api.renderJobCaptcha.route, async (req, res) => {
    const id = parse(api.renderJobCaptcha.params.id, req.params['id']);
    const answer = await authorizeCaptchaSolve({ db: deps.db, ledger: deps.ledger }, id, parse(api.renderJobCaptcha.body, req.body));
    if (answer.state === 'allowed') onCommitted();
    res.json(answer);
  });
  r.post(api.renderJobCaptchaSolved.route, async (req, res) => {
    const id = parse(api.renderJobCaptchaSolved.params.id, req.params['id']);
    const answer = await captchaSolved({ db: deps.db }, id, parse(api.renderJobCaptchaSolved.body, req.body));
    onCommitted();
    res.json(answer);
  });
  return r;
}

/** What an upload declares in its headers: Content-Type, Content-Length and the digest. */
function declaredUpload(req: Request): DeclaredUpload {
  const length = req.header('content-length');
  return {
    contentType: req.header('content-type'),
    length: length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined,
    sha256: req.header(RENDER_UPLOAD_DIGEST_HEADER),
  };
}

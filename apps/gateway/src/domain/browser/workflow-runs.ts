import { inputHashOf, getDataRequest, submitRequest, type SubmissionContext } from '../requests/data-requests.js';
import type { GatewayDeps } from '../../deps.js';
import type { RequestDetail, SubmissionResponse } from '../../models/index.js';
import { conflict, idOrNotFound, notFound } from './claims.js';
import { requireKeyScope } from './project-keys.js';

/**
 * Running a workflow (browser-workflow API, beyond the spec): the active version's definition is
 * submitted as an ordinary browser request of the tenant (same validation, limits, billing and
 * pipeline), linked to the key's project and environment, the workflow and the version. The
 * project's budget cap holds every run within it (the orchestrator admits a run only while the cap
 * leaves room, and gives it that room as its ceiling). Its lifecycle events carry the project and
 * environment, so the project's webhook endpoints receive them.
 *
 * Idempotency-Key: keys of runs live apart from the tenant's submissions (per environment and
 * workflow), and a replay is judged by the run's own input (the workflow), not by the version's
 * definition: the same key after a new activation answers the original run.
 */
export async function runWorkflow(
  deps: Pick<GatewayDeps, 'db' | 'env' | 'extractor' | 'log' | 'metrics' | 'orchestrator' | 'redis'>,
  ctx: SubmissionContext,
  projectId: string,
  environmentId: string,
  workflowId: string,
): Promise<SubmissionResponse> {
  const scope = requireKeyScope(ctx.tenant, projectId, environmentId);
  const wid = idOrNotFound(workflowId, 'workflow');
  const tenantId = ctx.tenant.tenantId;
  const [workflow, project] = await Promise.all([
    deps.db.workflow.findFirst({ where: { id: wid, tenantId, projectId: scope.projectId }, include: { activeVersion: true } }),
    deps.db.project.findFirst({ where: { id: scope.projectId, tenantId }, select: { budgetCapTokens: true } }),
  ]);
  if (!workflow || !project) throw notFound('workflow');
  const version = workflow.activeVersion;
  if (!version) throw conflict('The workflow has no active version: publish a version and activate it first.');
  return submitRequest(deps, ctx, version.definition, 'client', {
    origin: {
      project_id: scope.projectId,
      environment_id: scope.environmentId,
      workflow_id: workflow.id,
      workflow_version_id: version.id,
      budget_cap_tokens: project.budgetCapTokens,
    },
    keySpace: `workflow-run:${scope.environmentId}:${workflow.id}`,
    inputHash: inputHashOf({ workflow_id: workflow.id, environment_id: scope.environmentId }),
  });
}

/** A run, read with the key of its project and environment; any other request is a 404. */
export async function readWorkflowRun(
  deps: Pick<GatewayDeps, 'extractor' | 'orchestrator'>,
  ctx: Pick<SubmissionContext, 'tenant'>,
  projectId: string,
  environmentId: string,
  runId: string,
): Promise<RequestDetail> {
  const scope = requireKeyScope(ctx.tenant, projectId, environmentId);
  const id = idOrNotFound(runId, 'run');
  const detail = await getDataRequest(deps, ctx.tenant.tenantId, id);
  const origin = detail.workflow_run;
  if (!origin || origin.project_id !== scope.projectId || origin.environment_id !== scope.environmentId) throw notFound('run');
  return detail;
}

import { PublicError } from '@wdr/kit/errors';
import type { GatewayDeps } from '../../deps.js';
import type {
  ActivateWorkflowVersionBody,
  CreateWorkflowBody,
  CreateWorkflowVersionBody,
  PublishWorkflowVersionBody,
  UpdateWorkflowVersionBody,
  Workflow,
  WorkflowDefinition,
  WorkflowDetail,
  WorkflowPage,
  WorkflowVersion,
  WorkflowVersionStatus,
} from '../../models/browser.js';
import type { Prisma, Workflow as WorkflowRow, WorkflowVersion as VersionRow } from '../../generated/prisma/client.js';
import { normalizeSubmission } from '../validation/submission-body.js';
import { conflict, idOrNotFound, idempotentWrite, notFound, pageFrom, pageOf, uuidv7, type PageArgs, type Tx } from './claims.js';

/** Modes that render in the browser: a workflow is a browser job definition. */
const BROWSER_MODES = new Set(['browser', 'residential_browser']);

/**
 * A version's definition is a submission body checked by the submission rules
 * (domain/validation/submission-body.ts), every problem reported under `definition.<field>`, plus
 * the one rule of a workflow: it renders in the browser.
 */
export function validateDefinition(definition: unknown): WorkflowDefinition {
  let normalized;
  try {
    normalized = normalizeSubmission(definition);
  } catch (err) {
    if (err instanceof PublicError && err.code === 'VALIDATION_FAILED') {
      throw new PublicError('VALIDATION_FAILED', 'The workflow definition is not valid.', {
        details: (err.details ?? []).map((d) => ({ field: d.field === 'body' ? 'definition' : `definition.${d.field}`, issue: d.issue })),
      });
    }
    throw err;
  }
  const details = [];
  if (normalized.mode !== undefined && !BROWSER_MODES.has(normalized.mode))
    details.push({ field: 'definition.mode', issue: 'a workflow renders in the browser: browser or residential_browser' });
  if (!normalized.javascript)
    details.push({ field: 'definition.javascript', issue: 'a workflow renders in the browser: javascript cannot be false' });
  if (details.length > 0) throw new PublicError('VALIDATION_FAILED', 'The workflow definition is not valid.', { details });
  return definition as WorkflowDefinition;
}

const workflowView = (w: WorkflowRow): Workflow => ({
  id: w.id,
  project_id: w.projectId,
  name: w.name,
  workflow_version: w.workflowVersion,
  active_version_id: w.activeVersionId,
  created_at: w.createdAt.toISOString(),
  updated_at: w.updatedAt.toISOString(),
});

const versionView = (v: VersionRow, activeVersionId: string | null): WorkflowVersion => ({
  id: v.id,
  workflow_id: v.workflowId,
  number: v.number,
  status: v.status as WorkflowVersionStatus,
  revision: v.revision,
  active: v.id === activeVersionId,
  definition: v.definition as unknown as WorkflowDefinition,
  created_at: v.createdAt.toISOString(),
  updated_at: v.updatedAt.toISOString(),
  published_at: v.publishedAt?.toISOString() ?? null,
});

export async function createWorkflow(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  key: string | undefined,
  projectId: string,
  body: CreateWorkflowBody,
): Promise<Workflow> {
  const pid = idOrNotFound(projectId, 'project');
  return idempotentWrite(deps, tenantId, key, 'create_workflow', { pid, body }, async (tx) => {
    const project = await tx.project.findFirst({ where: { id: pid, tenantId }, select: { id: true } });
    if (!project) throw notFound('project');
    return workflowView(await tx.workflow.create({ data: { id: uuidv7(), tenantId, projectId: pid, name: body.name } }));
  });
}

export async function listWorkflows(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  projectId: string,
  args: PageArgs,
): Promise<WorkflowPage> {
  const pid = idOrNotFound(projectId, 'project');
  const project = await deps.db.project.findFirst({ where: { id: pid, tenantId }, select: { id: true } });
  if (!project) throw notFound('project');
  const { after, take } = pageOf(args);
  const rows = await deps.db.workflow.findMany({
    where: { tenantId, projectId: pid, ...(after ? { id: { gt: after } } : {}) },
    orderBy: { id: 'asc' },
    take: take + 1,
  });
  return pageFrom(rows, take, (r) => r.id, workflowView);
}

export async function readWorkflow(deps: Pick<GatewayDeps, 'db'>, tenantId: string, workflowId: string): Promise<WorkflowDetail> {
  const id = idOrNotFound(workflowId, 'workflow');
  const w = await deps.db.workflow.findFirst({ where: { id, tenantId }, include: { versions: { orderBy: { number: 'desc' } } } });
  if (!w) throw notFound('workflow');
  return { ...workflowView(w), versions: w.versions.map((v) => versionView(v, w.activeVersionId)) };
}

/** The tenant's workflow, locked for the rest of the transaction (version numbers and activation serialise on it). */
async function lockWorkflow(tx: Tx, tenantId: string, workflowId: string): Promise<WorkflowRow> {
  const rows = await tx.$queryRaw<
    { id: string }[]
  >`SELECT id FROM workflows WHERE id = ${workflowId}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
  if (rows.length === 0) throw notFound('workflow');
  return tx.workflow.findUniqueOrThrow({ where: { id: workflowId } });
}

export async function createDraftVersion(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  key: string | undefined,
  workflowId: string,
  body: CreateWorkflowVersionBody,
): Promise<WorkflowVersion> {
  const wid = idOrNotFound(workflowId, 'workflow');
  const definition = validateDefinition(body.definition);
  return idempotentWrite(deps, tenantId, key, 'create_version', { wid, body }, async (tx) => {
    const w = await lockWorkflow(tx, tenantId, wid);
    const last = await tx.workflowVersion.findFirst({ where: { workflowId: wid }, orderBy: { number: 'desc' }, select: { number: true } });
    const v = await tx.workflowVersion.create({
      data: {
        id: uuidv7(),
        tenantId,
        workflowId: wid,
        number: (last?.number ?? 0) + 1,
        definition: definition as unknown as Prisma.InputJsonValue,
      },
    });
    return versionView(v, w.activeVersionId);
  });
}

async function versionOf(tx: Tx, tenantId: string, versionId: string): Promise<VersionRow> {
  const v = await tx.workflowVersion.findFirst({ where: { id: versionId, tenantId } });
  if (!v) throw notFound('workflow version');
  return v;
}

const staleRevision = (current: number) => conflict(`The draft's revision is ${current}: it changed since it was read.`);
const published = () => conflict('This workflow version is published and cannot change.');

/** Beyond the spec: edit a draft; `revision` must be the current one, and the edit increments it. */
export async function updateDraftVersion(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  key: string | undefined,
  versionId: string,
  body: UpdateWorkflowVersionBody,
): Promise<WorkflowVersion> {
  const vid = idOrNotFound(versionId, 'workflow version');
  const definition = validateDefinition(body.definition);
  return idempotentWrite(deps, tenantId, key, 'update_version', { vid, body }, async (tx) => {
    const updated = await tx.workflowVersion.updateMany({
      where: { id: vid, tenantId, status: 'draft', revision: body.revision },
      data: { definition: definition as unknown as Prisma.InputJsonValue, revision: { increment: 1 }, updatedAt: new Date() },
    });
    const v = await versionOf(tx, tenantId, vid);
    if (updated.count === 0) throw v.status === 'published' ? published() : staleRevision(v.revision);
    const w = await tx.workflow.findUniqueOrThrow({ where: { id: v.workflowId }, select: { activeVersionId: true } });
    return versionView(v, w.activeVersionId);
  });
}

/** SPEC: publish a draft with its current `revision` (stale: 409); the version is immutable from then on. */
export async function publishVersion(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  key: string | undefined,
  versionId: string,
  body: PublishWorkflowVersionBody,
): Promise<void> {
  const vid = idOrNotFound(versionId, 'workflow version');
  await idempotentWrite(deps, tenantId, key, 'publish', { vid, body }, async (tx) => {
    const updated = await tx.workflowVersion.updateMany({
      where: { id: vid, tenantId, status: 'draft', revision: body.revision },
      data: { status: 'published', publishedAt: new Date(), updatedAt: new Date() },
    });
    if (updated.count === 0) {
      const v = await versionOf(tx, tenantId, vid);
      throw v.status === 'published' ? conflict('This workflow version is already published.') : staleRevision(v.revision);
    }
    return null;
  });
}

/**
 * SPEC: make a published version of the workflow its active one, given the workflow's current
 * `workflow_version` (stale: 409); each activation increments it. Activating an earlier published
 * version is the rollback. A draft is 409; another workflow's version is 404.
 */
export async function activateVersion(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  key: string | undefined,
  workflowId: string,
  versionId: string,
  body: ActivateWorkflowVersionBody,
): Promise<void> {
  const wid = idOrNotFound(workflowId, 'workflow');
  const vid = idOrNotFound(versionId, 'workflow version');
  await idempotentWrite(deps, tenantId, key, 'activate', { wid, vid, body }, async (tx) => {
    const w = await lockWorkflow(tx, tenantId, wid);
    const v = await tx.workflowVersion.findFirst({ where: { id: vid, workflowId: wid, tenantId } });
    if (!v) throw notFound('workflow version');
    if (w.workflowVersion !== body.workflow_version) {
      throw conflict(`The workflow's workflow_version is ${w.workflowVersion}: it changed since it was read.`);
    }
    if (v.status !== 'published') throw conflict('Only a published version can be activated: publish it first.');
    await tx.workflow.update({
      where: { id: wid },
      data: { activeVersionId: vid, workflowVersion: { increment: 1 }, updatedAt: new Date() },
    });
    return null;
  });
}

import type { GatewayDeps } from '../../deps.js';
import type {
  AddMemberBody,
  CreateProjectBody,
  CreateWorkspaceBody,
  Project,
  ProjectPage,
  Workspace,
  WorkspaceMember,
  WorkspaceMemberPage,
  WorkspacePage,
  WorkspaceRole,
} from '../../models/browser.js';
import type { Environment, Project as ProjectRow, WorkspaceMember as MemberRow } from '../../generated/prisma/client.js';
import {
  conflict,
  idOrNotFound,
  idempotentWrite,
  isUniqueViolation,
  notFound,
  pageFrom,
  pageOf,
  uuidv7,
  type PageArgs,
  type Tx,
} from './claims.js';

/** The environments every project is created with, in this order. */
export const PROJECT_ENVIRONMENTS = ['production', 'staging'] as const;

const workspaceView = (w: { id: string; name: string; createdAt: Date }): Workspace => ({
  id: w.id,
  name: w.name,
  created_at: w.createdAt.toISOString(),
});

export function projectView(p: ProjectRow & { environments: Environment[] }): Project {
  const order = (n: string) => (PROJECT_ENVIRONMENTS as readonly string[]).indexOf(n);
  return {
    id: p.id,
    workspace_id: p.workspaceId,
    name: p.name,
    slug: p.slug,
    budget_cap_tokens: p.budgetCapTokens,
    environments: [...p.environments].sort((a, b) => order(a.name) - order(b.name)).map((e) => ({ id: e.id, name: e.name })),
    created_at: p.createdAt.toISOString(),
  };
}

const memberView = (m: MemberRow): WorkspaceMember => ({
  user_id: m.userId,
  role: m.role as WorkspaceRole,
  created_at: m.createdAt.toISOString(),
  updated_at: m.updatedAt.toISOString(),
});

export async function createWorkspace(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  key: string | undefined,
  body: CreateWorkspaceBody,
): Promise<Workspace> {
  return idempotentWrite(deps, tenantId, key, 'create_workspace', body, async (tx) => {
    const w = await tx.workspace.create({
      data: { id: uuidv7(), tenantId, name: body.name, members: { create: { userId: body.owner_user_id, role: 'owner' } } },
    });
    return workspaceView(w);
  });
}

export async function listWorkspaces(deps: Pick<GatewayDeps, 'db'>, tenantId: string, args: PageArgs): Promise<WorkspacePage> {
  const { after, take } = pageOf(args);
  const rows = await deps.db.workspace.findMany({
    where: { tenantId, ...(after ? { id: { gt: after } } : {}) },
    orderBy: { id: 'asc' },
    take: take + 1,
  });
  return pageFrom(rows, take, (r) => r.id, workspaceView);
}

/** The tenant's workspace, locked for the rest of the transaction (member and project changes serialise on it). */
async function lockWorkspace(tx: Tx, tenantId: string, workspaceId: string): Promise<void> {
  const id = idOrNotFound(workspaceId, 'workspace');
  const rows = await tx.$queryRaw<
    { id: string }[]
  >`SELECT id FROM workspaces WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
  if (rows.length === 0) throw notFound('workspace');
}

async function requireWorkspace(deps: Pick<GatewayDeps, 'db'>, tenantId: string, workspaceId: string): Promise<string> {
  const id = idOrNotFound(workspaceId, 'workspace');
  const w = await deps.db.workspace.findFirst({ where: { id, tenantId }, select: { id: true } });
  if (!w) throw notFound('workspace');
  return id;
}

/**
 * SPEC: create a project in a workspace, with its `production` and `staging` environments. The
 * slug is unique in the workspace (409 CONFLICT). Answers the new project's id (the controller
 * puts it in `Location`; the body stays empty as the spec says).
 */
export async function createProject(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  key: string | undefined,
  workspaceId: string,
  body: CreateProjectBody,
): Promise<{ project_id: string }> {
  try {
    return await idempotentWrite(deps, tenantId, key, 'create_project', { workspaceId, body }, async (tx) => {
      await lockWorkspace(tx, tenantId, workspaceId);
      const taken = await tx.project.findFirst({ where: { workspaceId, slug: body.slug }, select: { id: true } });
      if (taken) throw conflict(`The slug "${body.slug}" is already used in this workspace.`);
      const projectId = uuidv7();
      await tx.project.create({
        data: {
          id: projectId,
          tenantId,
          workspaceId,
          name: body.name,
          slug: body.slug,
          budgetCapTokens: body.budget_cap_tokens ?? null,
          environments: { create: PROJECT_ENVIRONMENTS.map((name) => ({ id: uuidv7(), tenantId, name })) },
        },
      });
      return { project_id: projectId };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`The slug "${body.slug}" is already used in this workspace.`);
    throw err;
  }
}

export async function listProjects(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  workspaceId: string,
  args: PageArgs,
): Promise<ProjectPage> {
  const id = await requireWorkspace(deps, tenantId, workspaceId);
  const { after, take } = pageOf(args);
  const rows = await deps.db.project.findMany({
    where: { tenantId, workspaceId: id, ...(after ? { id: { gt: after } } : {}) },
    include: { environments: true },
    orderBy: { id: 'asc' },
    take: take + 1,
  });
  return pageFrom(rows, take, (r) => r.id, projectView);
}

export async function readProject(deps: Pick<GatewayDeps, 'db'>, tenantId: string, projectId: string): Promise<Project> {
  const id = idOrNotFound(projectId, 'project');
  const p = await deps.db.project.findFirst({ where: { id, tenantId }, include: { environments: true } });
  if (!p) throw notFound('project');
  return projectView(p);
}

/** The tenant's project and one of its environments, or 404 for either. */
export async function requireEnvironment(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  projectId: string,
  environmentId: string,
): Promise<{ projectId: string; environmentId: string }> {
  const pid = idOrNotFound(projectId, 'project');
  const eid = idOrNotFound(environmentId, 'environment');
  const env = await deps.db.environment.findFirst({ where: { id: eid, projectId: pid, tenantId }, select: { id: true } });
  if (!env) throw notFound('project or environment');
  return { projectId: pid, environmentId: eid };
}

const lastOwner = () => conflict('The workspace would have no owner left: add another owner first.');

async function ownerCount(tx: Tx, workspaceId: string): Promise<number> {
  return tx.workspaceMember.count({ where: { workspaceId, role: 'owner' } });
}

/** SPEC: add a member, or change an existing member's role. Demoting the last owner is 409 CONFLICT. */
export async function putMember(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  key: string | undefined,
  workspaceId: string,
  body: AddMemberBody,
): Promise<void> {
  await idempotentWrite(deps, tenantId, key, 'put_member', { workspaceId, body }, async (tx) => {
    await lockWorkspace(tx, tenantId, workspaceId);
    const current = await tx.workspaceMember.findUnique({ where: { workspaceId_userId: { workspaceId, userId: body.user_id } } });
    if (current?.role === 'owner' && body.role !== 'owner' && (await ownerCount(tx, workspaceId)) <= 1) throw lastOwner();
    if (!current) {
      await tx.workspaceMember.create({ data: { workspaceId, userId: body.user_id, role: body.role } });
    } else if (current.role !== body.role) {
      await tx.workspaceMember.update({
        where: { workspaceId_userId: { workspaceId, userId: body.user_id } },
        data: { role: body.role, updatedAt: new Date() },
      });
    }
    return null;
  });
}

/** Beyond the spec: remove a member. Removing the last owner is 409 CONFLICT; a non-member is 404. */
export async function removeMember(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  key: string | undefined,
  workspaceId: string,
  userId: number,
): Promise<void> {
  await idempotentWrite(deps, tenantId, key, 'remove_member', { workspaceId, userId }, async (tx) => {
    await lockWorkspace(tx, tenantId, workspaceId);
    const current = await tx.workspaceMember.findUnique({ where: { workspaceId_userId: { workspaceId, userId } } });
    if (!current) throw notFound('member');
    if (current.role === 'owner' && (await ownerCount(tx, workspaceId)) <= 1) throw lastOwner();
    await tx.workspaceMember.delete({ where: { workspaceId_userId: { workspaceId, userId } } });
    return null;
  });
}

export async function listMembers(
  deps: Pick<GatewayDeps, 'db'>,
  tenantId: string,
  workspaceId: string,
  args: PageArgs & { cursor?: string | undefined },
): Promise<WorkspaceMemberPage> {
  const id = await requireWorkspace(deps, tenantId, workspaceId);
  const { take } = pageOf({ limit: args.limit });
  let after: number | undefined;
  if (args.cursor) {
    after = Number(Buffer.from(args.cursor, 'base64url').toString('utf8'));
    if (!Number.isInteger(after)) after = undefined;
  }
  const rows = await deps.db.workspaceMember.findMany({
    where: { workspaceId: id, ...(after !== undefined ? { userId: { gt: after } } : {}) },
    orderBy: { userId: 'asc' },
    take: take + 1,
  });
  return pageFrom(rows, take, (r) => String(r.userId), memberView);
}

-- Browser workflows (issue 10): a tenant's workspaces, their members, projects with their
-- environments, project+environment API keys, workflows and their versions, and the claims that
-- make the cabinet's browser-workflow writes idempotent. Webhook endpoints are not here: they
-- belong to webhook-dispatcher, which knows projects and environments only by these ids.

CREATE TABLE workspaces (
  id         uuid PRIMARY KEY,
  tenant_id  uuid NOT NULL REFERENCES tenants(id),
  name       text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX workspaces_tenant_idx ON workspaces (tenant_id, created_at, id);

CREATE TABLE workspace_members (
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  user_id      integer NOT NULL,
  role         text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at   timestamptz(3) NOT NULL DEFAULT now(),
  updated_at   timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, user_id)
);

CREATE TABLE projects (
  id                uuid PRIMARY KEY,
  tenant_id         uuid NOT NULL REFERENCES tenants(id),
  workspace_id      uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name              text NOT NULL,
  slug              text NOT NULL,
  budget_cap_tokens integer CHECK (budget_cap_tokens IS NULL OR budget_cap_tokens >= 0),
  created_at        timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT projects_workspace_slug_key UNIQUE (workspace_id, slug)
);
CREATE INDEX projects_tenant_idx ON projects (tenant_id);

CREATE TABLE environments (
  id         uuid PRIMARY KEY,
  tenant_id  uuid NOT NULL REFERENCES tenants(id),
  project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name       text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT environments_project_name_key UNIQUE (project_id, name)
);

-- Keys of the browser-workflow API: `wdrp_<prefix>_<secret>`, stored as a peppered HMAC like api_keys.
CREATE TABLE project_api_keys (
  id             uuid PRIMARY KEY,
  tenant_id      uuid NOT NULL REFERENCES tenants(id),
  project_id     uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  environment_id uuid NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  prefix         text NOT NULL UNIQUE,
  hash           text NOT NULL,
  label          text NOT NULL DEFAULT 'default',
  created_at     timestamptz(3) NOT NULL DEFAULT now(),
  revoked_at     timestamptz(3)
);
CREATE INDEX project_api_keys_scope_idx ON project_api_keys (project_id, environment_id);

-- A revoked (or deleted) project key drops out of every replica's credential cache at once.
CREATE TRIGGER project_api_keys_credential_notify
  AFTER UPDATE OR DELETE ON project_api_keys
  FOR EACH ROW EXECUTE FUNCTION credential_notify('tenant_id');

CREATE TABLE workflows (
  id                uuid PRIMARY KEY,
  tenant_id         uuid NOT NULL REFERENCES tenants(id),
  project_id        uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name              text NOT NULL,
  -- Optimistic concurrency of activation: each activation increments it.
  workflow_version  integer NOT NULL DEFAULT 0,
  active_version_id uuid,
  created_at        timestamptz(3) NOT NULL DEFAULT now(),
  updated_at        timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX workflows_project_idx ON workflows (project_id, created_at, id);

CREATE TABLE workflow_versions (
  id           uuid PRIMARY KEY,
  tenant_id    uuid NOT NULL REFERENCES tenants(id),
  workflow_id  uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
  number       integer NOT NULL,
  status       text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'published')),
  -- Each edit of a draft increments it; publish must name the current one.
  revision     integer NOT NULL DEFAULT 1,
  definition   jsonb NOT NULL,
  created_at   timestamptz(3) NOT NULL DEFAULT now(),
  updated_at   timestamptz(3) NOT NULL DEFAULT now(),
  published_at timestamptz(3),
  CONSTRAINT workflow_versions_number_key UNIQUE (workflow_id, number)
);

ALTER TABLE workflows ADD CONSTRAINT workflows_active_version_fkey
  FOREIGN KEY (active_version_id) REFERENCES workflow_versions(id);

-- A published version never changes: the database refuses it too, not only the code.
CREATE FUNCTION workflow_version_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status = 'published' THEN
    RAISE EXCEPTION 'workflow version % is published and immutable', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER workflow_versions_immutable
  BEFORE UPDATE ON workflow_versions
  FOR EACH ROW EXECUTE FUNCTION workflow_version_immutable();

-- Idempotency of the cabinet's browser-workflow writes: (tenant, Idempotency-Key) derives key_id;
-- the claim commits with the write, so a retry replays and another write under the key is a 409.
CREATE TABLE client_write_claims (
  key_id     uuid PRIMARY KEY,
  tenant_id  uuid NOT NULL REFERENCES tenants(id),
  input_hash text NOT NULL,
  response   jsonb,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX client_write_claims_created_idx ON client_write_claims (created_at);

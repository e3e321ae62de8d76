-- Workflow runs (the browser-workflow API): a request may belong to a project and environment and
-- run a workflow version. Its lifecycle events carry the scope (webhook endpoints of the project
-- receive them). `budget_committed` is what the run holds against its project's budget cap: its
-- ceiling while unsettled, its charge once settled, 0 once refunded.
ALTER TABLE "data_requests"
    ADD COLUMN "project_id" UUID,
    ADD COLUMN "environment_id" UUID,
    ADD COLUMN "workflow_id" UUID,
    ADD COLUMN "workflow_version_id" UUID,
    ADD COLUMN "budget_committed" INTEGER NOT NULL DEFAULT 0;

-- The budget check sums a project's committed tokens at every admission of a capped run.
CREATE INDEX "data_requests_project_id_idx" ON "data_requests"("project_id") WHERE "project_id" IS NOT NULL;

-- Auto-repair (issue 11 item 5): where a version comes from, the repairs and their audit trail.
ALTER TABLE "recipe_versions" ADD COLUMN "origin" TEXT NOT NULL DEFAULT 'tenant',
ADD COLUMN "repair_reason" TEXT,
ADD COLUMN "repaired_from_version_id" UUID;
UPDATE "recipe_versions" SET "origin" = 'generation' WHERE "reason" LIKE 'generated:%';

CREATE INDEX "extraction_runs_version_id_finished_at_idx" ON "extraction_runs"("version_id", "finished_at");

CREATE TABLE "recipe_repairs" (
    "id" UUID NOT NULL,
    "recipe_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "from_version_id" UUID NOT NULL,
    "trigger_run_id" UUID NOT NULL,
    "trigger_request_id" UUID NOT NULL,
    "reason" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "continuous" BOOLEAN NOT NULL DEFAULT false,
    "version_id" UUID,
    "method" TEXT,
    "error" JSONB,
    "attempts" JSONB,
    "charged_tokens" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "recipe_repairs_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "recipe_repairs_trigger_run_id_key" ON "recipe_repairs"("trigger_run_id");
CREATE INDEX "recipe_repairs_recipe_id_created_at_idx" ON "recipe_repairs"("recipe_id", "created_at");
ALTER TABLE "recipe_repairs" ADD CONSTRAINT "recipe_repairs_recipe_id_fkey" FOREIGN KEY ("recipe_id") REFERENCES "recipes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

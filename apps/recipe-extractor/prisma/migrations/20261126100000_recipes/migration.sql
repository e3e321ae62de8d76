-- Recipes, their versions, extraction runs and the idempotency records of client writes.
CREATE TABLE "recipes" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "sample_url" TEXT NOT NULL,
    "advanced_schema" BOOLEAN NOT NULL DEFAULT false,
    "status" TEXT NOT NULL DEFAULT 'draft',
    "active_version_id" UUID,
    "auto_repair_enabled" BOOLEAN NOT NULL DEFAULT false,
    "continuous_repair_confirmed_at" TIMESTAMPTZ(3),
    "last_version" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "recipes_pkey" PRIMARY KEY ("id")
);

-- Listings page a tenant's recipes by (created_at, id).
CREATE INDEX "recipes_tenant_id_created_at_id_idx" ON "recipes"("tenant_id", "created_at", "id");

CREATE TABLE "recipe_versions" (
    "id" UUID NOT NULL,
    "recipe_id" UUID NOT NULL,
    "version" INTEGER NOT NULL,
    "dsl_version" INTEGER NOT NULL,
    "definition" JSONB NOT NULL,
    "fields" JSONB NOT NULL,
    "reason" TEXT NOT NULL DEFAULT 'created',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "recipe_versions_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "recipe_versions_recipe_id_version_key" ON "recipe_versions"("recipe_id", "version");

ALTER TABLE "recipe_versions" ADD CONSTRAINT "recipe_versions_recipe_id_fkey" FOREIGN KEY ("recipe_id") REFERENCES "recipes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Runs outlive their recipe (a deleted recipe's runs stay readable): no foreign key.
CREATE TABLE "extraction_runs" (
    "id" UUID NOT NULL,
    "request_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "recipe_id" UUID NOT NULL,
    "version_id" UUID NOT NULL,
    -- Origin only: relative URLs resolve against it; the full target URL stays sealed in the orchestrator.
    "page_origin" TEXT,
    "status" TEXT NOT NULL,
    "page_status" TEXT,
    "error" JSONB,
    "output" JSONB,
    "warnings" JSONB,
    "retried_from_run_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "extraction_runs_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "extraction_runs_request_id_key" ON "extraction_runs"("request_id");

CREATE TABLE "idempotency_records" (
    "key_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "input_hash" TEXT NOT NULL,
    "response" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotency_records_pkey" PRIMARY KEY ("key_id")
);

CREATE INDEX "idempotency_records_created_at_idx" ON "idempotency_records"("created_at");

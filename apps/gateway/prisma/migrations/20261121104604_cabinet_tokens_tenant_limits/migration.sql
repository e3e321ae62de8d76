-- CreateTable
CREATE TABLE "cabinet_tokens" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "prefix" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "label" TEXT NOT NULL DEFAULT 'default',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "cabinet_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tenant_limits" (
    "tenant_id" UUID NOT NULL,
    "submissions_per_window" INTEGER,
    "window_seconds" INTEGER,
    "max_concurrent_requests" INTEGER,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tenant_limits_pkey" PRIMARY KEY ("tenant_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "cabinet_tokens_prefix_key" ON "cabinet_tokens"("prefix");

-- CreateIndex
CREATE INDEX "cabinet_tokens_tenant_id_idx" ON "cabinet_tokens"("tenant_id");

-- AddForeignKey
ALTER TABLE "cabinet_tokens" ADD CONSTRAINT "cabinet_tokens_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tenant_limits" ADD CONSTRAINT "tenant_limits_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Limits are positive when set; null inherits the gateway default.
ALTER TABLE "tenant_limits" ADD CONSTRAINT "tenant_limits_positive" CHECK (
    ("submissions_per_window" IS NULL OR "submissions_per_window" > 0)
    AND ("window_seconds" IS NULL OR "window_seconds" BETWEEN 1 AND 86400)
    AND ("max_concurrent_requests" IS NULL OR "max_concurrent_requests" > 0)
);

-- CreateTable
CREATE TABLE "debug_artifacts" (
    "request_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "tenant_id" UUID NOT NULL,
    "content_type" TEXT NOT NULL,
    "bytes" INTEGER NOT NULL,
    "sealed" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "debug_artifacts_pkey" PRIMARY KEY ("request_id","name")
);

-- CreateIndex
CREATE INDEX "debug_artifacts_expires_at_idx" ON "debug_artifacts"("expires_at");

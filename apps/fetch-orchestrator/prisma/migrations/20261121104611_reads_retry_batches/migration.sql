-- AlterTable
ALTER TABLE "data_requests" ADD COLUMN     "batch_index" INTEGER,
ADD COLUMN     "retried_from_id" UUID;

-- CreateTable
CREATE TABLE "batches" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "input_hash" TEXT NOT NULL,
    "route_mode" TEXT NOT NULL,
    "pricing_version" INTEGER NOT NULL,
    "total_jobs" INTEGER NOT NULL,
    "charged_tokens" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "batches_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "batches_tenant_id_created_at_idx" ON "batches"("tenant_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "data_requests_tenant_id_status_created_at_id_idx" ON "data_requests"("tenant_id", "status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "data_requests_batch_id_batch_index_idx" ON "data_requests"("batch_id", "batch_index");

-- AddForeignKey
ALTER TABLE "data_requests" ADD CONSTRAINT "data_requests_batch_id_fkey" FOREIGN KEY ("batch_id") REFERENCES "batches"("id") ON DELETE SET NULL ON UPDATE CASCADE;

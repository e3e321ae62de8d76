-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "orchestrator";

-- CreateTable
CREATE TABLE "data_requests" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "batch_id" UUID,
    "url_origin" TEXT NOT NULL,
    "target_sealed" TEXT,
    "target_purge_at" TIMESTAMPTZ(3) NOT NULL,
    "status" TEXT NOT NULL,
    "route_mode" TEXT NOT NULL,
    "proxy_type" TEXT,
    "pricing_version" INTEGER NOT NULL,
    "base_tokens" INTEGER NOT NULL,
    "protected_tokens" INTEGER NOT NULL DEFAULT 0,
    "captcha_tokens" INTEGER NOT NULL DEFAULT 0,
    "captcha_type" TEXT,
    "token_state" TEXT NOT NULL,
    "cached" BOOLEAN NOT NULL DEFAULT false,
    "protected" BOOLEAN NOT NULL DEFAULT false,
    "options" JSONB NOT NULL,
    "error" JSONB,
    "user_error" JSONB,
    "result_meta" JSONB,
    "proxy_used" TEXT,
    "last_event_seq" INTEGER NOT NULL DEFAULT 0,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "result_expires_at" TIMESTAMPTZ(3),

    CONSTRAINT "data_requests_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "request_events" (
    "request_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "request_events_pkey" PRIMARY KEY ("request_id","seq")
);

-- CreateTable
CREATE TABLE "request_results" (
    "request_id" UUID NOT NULL,
    "status_code" INTEGER NOT NULL,
    "content_type" TEXT,
    "body" BYTEA NOT NULL,
    "bytes" INTEGER NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "request_results_pkey" PRIMARY KEY ("request_id")
);

-- CreateTable
CREATE TABLE "outbox_messages" (
    "id" BIGSERIAL NOT NULL,
    "topic" TEXT NOT NULL,
    "message_key" TEXT NOT NULL,
    "envelope" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMPTZ(3),

    CONSTRAINT "outbox_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "processed_messages" (
    "consumer" TEXT NOT NULL,
    "event_id" UUID NOT NULL,
    "processed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "processed_messages_pkey" PRIMARY KEY ("consumer","event_id")
);

-- CreateIndex
CREATE INDEX "data_requests_tenant_id_created_at_id_idx" ON "data_requests"("tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "outbox_messages_published_at_id_idx" ON "outbox_messages"("published_at", "id");

-- AddForeignKey
ALTER TABLE "request_events" ADD CONSTRAINT "request_events_request_id_fkey" FOREIGN KEY ("request_id") REFERENCES "data_requests"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "request_results" ADD CONSTRAINT "request_results_request_id_fkey" FOREIGN KEY ("request_id") REFERENCES "data_requests"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "ledger";

-- CreateTable
CREATE TABLE "accounts" (
    "id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "tenant_id" UUID,
    "no_overdraft" BOOLEAN NOT NULL,
    "debits_pending" BIGINT NOT NULL DEFAULT 0,
    "debits_posted" BIGINT NOT NULL DEFAULT 0,
    "credits_pending" BIGINT NOT NULL DEFAULT 0,
    "credits_posted" BIGINT NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "transfers" (
    "id" TEXT NOT NULL,
    "debit_account_id" TEXT NOT NULL,
    "credit_account_id" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "kind" TEXT NOT NULL,
    "pending_id" TEXT,
    "request_id" UUID,
    "code" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "transfers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reservations" (
    "request_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "transfer_id" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "route_mode" TEXT NOT NULL,
    "proxy_type" TEXT NOT NULL,
    "pricing_version" INTEGER NOT NULL,
    "max_credits" INTEGER,
    "state" TEXT NOT NULL,
    "charged_tokens" BIGINT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at" TIMESTAMPTZ(3),

    CONSTRAINT "reservations_pkey" PRIMARY KEY ("request_id")
);

-- CreateTable
CREATE TABLE "prices" (
    "pricing_version" INTEGER NOT NULL,
    "network_class" TEXT NOT NULL,
    "tariff" TEXT NOT NULL,
    "tokens" INTEGER NOT NULL,

    CONSTRAINT "prices_pkey" PRIMARY KEY ("pricing_version","network_class","tariff")
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
CREATE UNIQUE INDEX "accounts_tenant_id_key" ON "accounts"("tenant_id");

-- CreateIndex
CREATE INDEX "transfers_debit_account_id_created_at_idx" ON "transfers"("debit_account_id", "created_at");

-- CreateIndex
CREATE INDEX "transfers_credit_account_id_created_at_idx" ON "transfers"("credit_account_id", "created_at");

-- CreateIndex
CREATE INDEX "transfers_request_id_idx" ON "transfers"("request_id");

-- CreateIndex
CREATE UNIQUE INDEX "reservations_transfer_id_key" ON "reservations"("transfer_id");

-- CreateIndex
CREATE INDEX "reservations_tenant_id_created_at_idx" ON "reservations"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "outbox_messages_published_at_id_idx" ON "outbox_messages"("published_at", "id");


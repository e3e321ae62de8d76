-- Plans, plan price overrides, multi-hold reservations with their cost lines and proxy traffic,
-- balance alerts, operator memos on transfers.

-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "balance_alert" TEXT NOT NULL DEFAULT 'none',
ADD COLUMN     "plan_id" TEXT NOT NULL DEFAULT 'standard';

-- AlterTable (held_tokens and plan_id are backfilled below, then lose their temporary defaults)
ALTER TABLE "reservations" ADD COLUMN     "charged_base_tokens" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "estimate_tokens" BIGINT,
ADD COLUMN     "worst_case_tokens" BIGINT,
ADD COLUMN     "captcha_solves" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "captcha_tokens" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "end_reason" TEXT,
ADD COLUMN     "held_tokens" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "plan_id" TEXT NOT NULL DEFAULT 'standard',
ADD COLUMN     "policy" TEXT NOT NULL DEFAULT 'standard',
ADD COLUMN     "request_bytes" BIGINT,
ADD COLUMN     "response_bytes" BIGINT,
ADD COLUMN     "traffic_measured" BOOLEAN,
ADD COLUMN     "traffic_proxy_type" TEXT,
ADD COLUMN     "traffic_tokens" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "uncollected_tokens" BIGINT NOT NULL DEFAULT 0;

UPDATE "reservations" SET "held_tokens" = "amount", "charged_base_tokens" = COALESCE("charged_tokens", 0);
ALTER TABLE "reservations" ALTER COLUMN "held_tokens" DROP DEFAULT, ALTER COLUMN "plan_id" DROP DEFAULT;

-- AlterTable
ALTER TABLE "transfers" ADD COLUMN     "memo" TEXT;

-- CreateTable
CREATE TABLE "plans" (
    "id" TEXT NOT NULL,
    "guarded_pricing" BOOLEAN NOT NULL,
    "low_balance_threshold_tokens" INTEGER NOT NULL,
    "worst_case_captcha_solves" INTEGER NOT NULL,
    "worst_case_traffic_bytes" BIGINT NOT NULL,
    "charge_currency" TEXT NOT NULL,
    "charge_basis" TEXT NOT NULL,
    "user_token_value_nano_usd" BIGINT NOT NULL,
    "markup_basis_points" INTEGER NOT NULL,
    "max_llm_charge_tokens" INTEGER NOT NULL,
    "preflight_required_balance_tokens" INTEGER NOT NULL,
    "exact_charge_available_after_completion" BOOLEAN NOT NULL,
    "failed_operations_charged" BOOLEAN NOT NULL,
    "deterministic_execution_uses_standard_scrape_pricing" BOOLEAN NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "plans_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "plan_prices" (
    "plan_id" TEXT NOT NULL,
    "pricing_version" INTEGER NOT NULL,
    "network_class" TEXT NOT NULL,
    "tariff" TEXT NOT NULL,
    "tokens" INTEGER NOT NULL,

    CONSTRAINT "plan_prices_pkey" PRIMARY KEY ("plan_id","pricing_version","network_class","tariff")
);

-- CreateIndex
CREATE INDEX "reservations_tenant_id_resolved_at_idx" ON "reservations"("tenant_id", "resolved_at");

-- Hand-written: seed data and constraints Prisma does not model.

-- Grants (free credits) and corrections get their own counterpart accounts, so the books show
-- purchased, granted and corrected tokens apart. Like operator:funding they may go negative.
INSERT INTO "accounts" ("id", "kind", "no_overdraft") VALUES
  ('operator:grants', 'system', false),
  ('operator:corrections', 'system', false)
ON CONFLICT DO NOTHING;

-- Pricing version 2, items billed after execution: a CAPTCHA solve, and measured proxy traffic
-- per GiB (rounded up to whole tokens per request).
INSERT INTO "prices" ("pricing_version", "network_class", "tariff", "tokens") VALUES
  (2, 'any', 'captcha', 10),
  (2, 'datacenter', 'traffic_gib', 200),
  (2, 'residential', 'traffic_gib', 2000)
ON CONFLICT DO NOTHING;

-- standard: every tenant starts here (base held at admission, no quote, premium unpriced).
-- business: guarded pricing (worst case held and quoted) and a premium network price.
INSERT INTO "plans" ("id", "guarded_pricing", "low_balance_threshold_tokens", "worst_case_captcha_solves", "worst_case_traffic_bytes",
  "charge_currency", "charge_basis", "user_token_value_nano_usd", "markup_basis_points", "max_llm_charge_tokens",
  "preflight_required_balance_tokens", "exact_charge_available_after_completion", "failed_operations_charged",
  "deterministic_execution_uses_standard_scrape_pricing") VALUES
  ('standard', false, 100, 1, 10485760, 'tokens', 'llm_usage', 100000, 2000, 500, 50, true, false, true),
  ('business', true, 1000, 1, 10485760, 'tokens', 'llm_usage', 100000, 1500, 2000, 50, true, false, true)
ON CONFLICT DO NOTHING;

INSERT INTO "plan_prices" ("plan_id", "pricing_version", "network_class", "tariff", "tokens") VALUES
  ('business', 2, 'premium', 'http', 50),
  ('business', 2, 'premium', 'browser', 125),
  ('business', 2, 'premium', 'traffic_gib', 5000)
ON CONFLICT DO NOTHING;

ALTER TABLE "transfers" ADD CONSTRAINT "transfers_kind_known"
  CHECK ("kind" IN ('posted', 'pending', 'post_pending', 'void_pending'));
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_balance_alert_known"
  CHECK ("balance_alert" IN ('none', 'low', 'exhausted'));
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_pending_non_negative"
  CHECK ("debits_pending" >= 0 AND "credits_pending" >= 0);
ALTER TABLE "reservations" ADD CONSTRAINT "reservations_state_known"
  CHECK ("state" IN ('reserved', 'settled', 'refunded'));
ALTER TABLE "reservations" ADD CONSTRAINT "reservations_amounts_non_negative"
  CHECK ("held_tokens" >= 0 AND "uncollected_tokens" >= 0 AND COALESCE("charged_tokens", 0) >= 0);
ALTER TABLE "prices" ADD CONSTRAINT "prices_tokens_non_negative" CHECK ("tokens" >= 0);
ALTER TABLE "plan_prices" ADD CONSTRAINT "plan_prices_tokens_non_negative" CHECK ("tokens" >= 0);

-- System accounts. operator:funding is the source of grants and the only account allowed to go
-- negative, so the sum over all accounts is always zero.
INSERT INTO "accounts" ("id", "kind", "no_overdraft") VALUES
  ('operator:funding', 'system', false),
  ('revenue:usage', 'system', false)
ON CONFLICT DO NOTHING;

-- Pricing version 2: tokens per request by network class and tariff (HTTP / browser).
-- Premium is deliberately absent: it is priced only where a plan configures it.
INSERT INTO "prices" ("pricing_version", "network_class", "tariff", "tokens") VALUES
  (2, 'datacenter', 'http', 1),
  (2, 'datacenter', 'browser', 5),
  (2, 'residential', 'http', 10),
  (2, 'residential', 'browser', 25)
ON CONFLICT DO NOTHING;

-- A safety net under the conditional UPDATEs of the domain code.
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_no_overdraft"
  CHECK (NOT "no_overdraft" OR "credits_posted" >= "debits_posted" + "debits_pending");
ALTER TABLE "transfers" ADD CONSTRAINT "transfers_amount_non_negative" CHECK ("amount" >= 0);

-- Transfers are immutable: corrections are new transfers, never edits.
CREATE FUNCTION "transfers_immutable"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'transfers are immutable; write a correcting transfer instead';
END;
$$;

CREATE TRIGGER "transfers_no_update_or_delete"
  BEFORE UPDATE OR DELETE ON "transfers"
  FOR EACH ROW EXECUTE FUNCTION "transfers_immutable"();

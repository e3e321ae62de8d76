-- Header and cookie values and browser actions are sealed at rest like the target URL (same key,
-- TARGET_URL_KEY, and rotation) and purged with it (domain/requests/sealed-inputs.ts). `options`
-- keeps header_names, cookie_names and browser_action_steps (types and selectors, no values).
--
-- Rows stored before this migration keep their secrets in `options` (the clear form) until the
-- orchestrator's retention pass rewrites them: it runs at start and every minute (and on
-- `admin purge-expired`), seals the secrets of rows whose URL is still kept and drops those of rows
-- whose URL was already purged. SQL cannot do it here: sealing needs the key, which the database
-- never sees. Until then the stages read the clear form as before, and views never show a value.
ALTER TABLE "data_requests" ADD COLUMN "secrets_sealed" TEXT;

-- The rows still in the clear form, so the pass finds them without reading the table (empty once
-- they are sealed; no new row is written in that form). Partial: Prisma does not model it.
CREATE INDEX "data_requests_clear_inputs_idx" ON "data_requests" ("id")
  WHERE "options" ?| array['headers', 'cookies', 'browser_actions'];

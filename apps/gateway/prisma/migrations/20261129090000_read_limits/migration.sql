-- Per-tenant overrides of the read limits (admin set-limits --read-rate / --read-concurrency); null = the gateway default.
ALTER TABLE "tenant_limits" ADD COLUMN "reads_per_window" INTEGER;
ALTER TABLE "tenant_limits" ADD COLUMN "max_concurrent_reads" INTEGER;

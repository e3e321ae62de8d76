-- The expiry sweep (domain/expiry.ts, every RESERVATION_SWEEP_MS) reads the oldest reservations
-- still `reserved`: without an index it read the whole table, settled ones included, every minute.
-- Partial: only the few open reservations are in it.
CREATE INDEX "reservations_open_created_at_idx" ON "reservations" ("created_at") WHERE "state" = 'reserved';

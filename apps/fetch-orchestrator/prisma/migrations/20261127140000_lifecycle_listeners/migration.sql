-- Who listens to a tenant's request lifecycle: a request event is mirrored on `request.lifecycle`
-- (an outbox row, a Kafka message, a fetch by every consumer) only for a tenant somebody listens
-- to. Two kinds of holder register here through the internal API: webhook-dispatcher for every
-- tenant with a webhook endpoint (no expiry; released when its last endpoint is deleted), and each
-- gateway instance for the tenants it has event streams open for (an expiry it renews while they
-- stay open). Every stored event stays in `request_events` either way (the history, SSE catch-up).
CREATE TABLE "lifecycle_listeners" (
    "tenant_id" UUID NOT NULL,
    "holder" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "lifecycle_listeners_pkey" PRIMARY KEY ("tenant_id", "holder")
);

-- The nil tenant stands for every tenant: until webhook-dispatcher has registered each tenant with
-- an endpoint (its first sync, which then deletes this row), every tenant counts as listened to.
-- A deploy of this migration therefore mirrors exactly what it mirrored before.
INSERT INTO "lifecycle_listeners" ("tenant_id", "holder") VALUES ('00000000-0000-0000-0000-000000000000', 'webhook-dispatcher');

-- The advisory lock key that orders a registration against the tenant's event writes.
CREATE FUNCTION wdr_lifecycle_lock_key(tenant uuid) RETURNS bigint LANGUAGE sql IMMUTABLE AS
$$ SELECT hashtextextended('lifecycle-listeners:' || tenant::text, 0) $$;

-- The gate, for every row written to the outbox on request.lifecycle: a `request.event_appended`
-- of a tenant nobody listens to is not inserted (any other type, `batch.completed`, always is).
-- Ordering with a registration: the writer takes the tenant's lock shared before it looks, and a
-- registration takes it exclusively around its insert (domain/lifecycle-listeners.ts). So a
-- registration commits only after every transaction that looked before it has ended (its events
-- are then in the stored history a new listener reads first), and a writer that looks after it
-- sees it: this function is VOLATILE, so in READ COMMITTED its query takes a fresh snapshot.
CREATE FUNCTION wdr_lifecycle_mirror() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  tenant uuid;
BEGIN
  IF NEW.envelope ->> 'type' IS DISTINCT FROM 'request.event_appended' THEN
    RETURN NEW;
  END IF;
  tenant := (NEW.envelope ->> 'tenant_id')::uuid;
  PERFORM pg_advisory_xact_lock_shared(wdr_lifecycle_lock_key(tenant));
  IF EXISTS (SELECT 1 FROM lifecycle_listeners
              WHERE tenant_id IN (tenant, '00000000-0000-0000-0000-000000000000'::uuid)
                AND (expires_at IS NULL OR expires_at > clock_timestamp())) THEN
    RETURN NEW;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER outbox_lifecycle_mirror BEFORE INSERT ON "outbox_messages"
  FOR EACH ROW WHEN (NEW.topic = 'requestLifecycle') EXECUTE FUNCTION wdr_lifecycle_mirror();

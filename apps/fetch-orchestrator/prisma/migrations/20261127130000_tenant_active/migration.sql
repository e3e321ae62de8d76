-- Each tenant's requests that have not ended, counted as they start and end, so admission's
-- concurrency ceiling reads a handful of rows instead of counting the tenant's pending requests
-- (which grew with the pile-up: a tenant with thousands queued paid for thousands of index entries
-- on every admission). Spread over 8 stripes by request id, so one tenant's concurrent admissions
-- do not queue on one row; kept by triggers, every path that stores a request or ends one included,
-- in the writing transaction. Inserts and deletes: statement triggers over the transition tables,
-- so a statement of many requests (a batch admission) updates its stripes in key order and two such
-- statements cannot deadlock. Updates: a row trigger that runs only when the status changed (every
-- status change is a statement of one request; the many-row updates, token states and claims,
-- change no status and pay nothing).
CREATE TABLE "tenant_active" (
    "tenant_id" UUID NOT NULL,
    "stripe" SMALLINT NOT NULL,
    "n" BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT "tenant_active_pkey" PRIMARY KEY ("tenant_id", "stripe")
);

CREATE FUNCTION wdr_active_stripe(id uuid) RETURNS smallint LANGUAGE sql IMMUTABLE AS
$$ SELECT (abs(hashtextextended(id::text, 0)) % 8)::smallint $$;

CREATE FUNCTION wdr_is_active(status text) RETURNS boolean LANGUAGE sql IMMUTABLE AS
$$ SELECT status NOT IN ('completed', 'failed', 'cancelled') $$;

CREATE FUNCTION wdr_tenant_active_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO tenant_active (tenant_id, stripe, n)
    SELECT tenant_id, wdr_active_stripe(id), count(*) FROM new_rows WHERE wdr_is_active(status)
     GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant_id, stripe) DO UPDATE SET n = tenant_active.n + EXCLUDED.n;
  ELSE
    INSERT INTO tenant_active (tenant_id, stripe, n)
    SELECT tenant_id, wdr_active_stripe(id), -count(*) FROM old_rows WHERE wdr_is_active(status)
     GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant_id, stripe) DO UPDATE SET n = tenant_active.n + EXCLUDED.n;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER data_requests_active_insert AFTER INSERT ON "data_requests"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION wdr_tenant_active_apply();
CREATE TRIGGER data_requests_active_delete AFTER DELETE ON "data_requests"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION wdr_tenant_active_apply();

CREATE FUNCTION wdr_tenant_active_moved() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  delta int := (CASE WHEN wdr_is_active(NEW.status) THEN 1 ELSE 0 END) - (CASE WHEN wdr_is_active(OLD.status) THEN 1 ELSE 0 END);
BEGIN
  IF delta <> 0 THEN
    INSERT INTO tenant_active (tenant_id, stripe, n) VALUES (NEW.tenant_id, wdr_active_stripe(NEW.id), delta)
    ON CONFLICT (tenant_id, stripe) DO UPDATE SET n = tenant_active.n + EXCLUDED.n;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER data_requests_active_update AFTER UPDATE OF status ON "data_requests"
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION wdr_tenant_active_moved();

INSERT INTO tenant_active (tenant_id, stripe, n)
SELECT tenant_id, wdr_active_stripe(id), count(*) FROM data_requests WHERE wdr_is_active(status) GROUP BY 1, 2;

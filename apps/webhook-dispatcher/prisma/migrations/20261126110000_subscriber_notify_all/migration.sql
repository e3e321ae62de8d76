-- Who listens (domain/subscribers.ts) now keeps each tenant's endpoints (status, event types,
-- project and environment) in memory, so every write that changes what a tenant's endpoints take
-- announces the tenant at commit: insert, delete, and an update of status, event types or scope
-- (a disabled or narrowed endpoint too: the dispatchers then read the tenant's endpoints again
-- instead of fanning out to nobody until the periodic reload). Payload as before:
-- `<schema>:<tenant_id>`.
CREATE OR REPLACE FUNCTION webhook_endpoints_notify() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('wdr_webhook_subscribers', TG_TABLE_SCHEMA || ':' || OLD.tenant_id::text);
  ELSE
    PERFORM pg_notify('wdr_webhook_subscribers', TG_TABLE_SCHEMA || ':' || NEW.tenant_id::text);
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

DROP TRIGGER webhook_endpoints_notify ON webhook_endpoints;
CREATE TRIGGER webhook_endpoints_notify
AFTER INSERT OR DELETE OR UPDATE OF status, event_types, project_id, environment_id ON webhook_endpoints
FOR EACH ROW EXECUTE FUNCTION webhook_endpoints_notify();

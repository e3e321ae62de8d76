-- Which tenants have an enabled endpoint (domain/subscribers.ts): every dispatcher keeps that set in
-- memory so the fan-out skips, without a transaction, the events of tenants that have none. A new
-- or re-enabled endpoint announces its tenant at commit; the payload is `<schema>:<tenant_id>`
-- (several schemas may share one database).
CREATE OR REPLACE FUNCTION webhook_endpoints_notify() RETURNS trigger AS $$
BEGIN
  IF NEW.status = 'enabled' THEN
    PERFORM pg_notify('wdr_webhook_subscribers', TG_TABLE_SCHEMA || ':' || NEW.tenant_id::text);
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER webhook_endpoints_notify
AFTER INSERT OR UPDATE OF status ON webhook_endpoints
FOR EACH ROW EXECUTE FUNCTION webhook_endpoints_notify();

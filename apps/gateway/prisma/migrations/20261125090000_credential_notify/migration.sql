-- Tell every gateway replica, at commit, which tenant's credentials or limits changed, so its
-- cache of verified credentials (domain/auth/credential-cache.ts) drops that tenant's entries at
-- once instead of serving a revoked key, a suspended tenant or old limits until they expire.
-- The payload is the tenant id; the trigger's argument names the column that holds it.
CREATE FUNCTION credential_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed jsonb;
BEGIN
  IF TG_OP = 'DELETE' THEN
    changed := to_jsonb(OLD);
  ELSE
    changed := to_jsonb(NEW);
  END IF;
  PERFORM pg_notify('wdr_credentials', changed ->> TG_ARGV[0]);
  RETURN NULL;
END
$$;

CREATE TRIGGER tenants_credential_notify
  AFTER UPDATE OR DELETE ON tenants
  FOR EACH ROW EXECUTE FUNCTION credential_notify('id');

CREATE TRIGGER api_keys_credential_notify
  AFTER UPDATE OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION credential_notify('tenant_id');

CREATE TRIGGER cabinet_tokens_credential_notify
  AFTER UPDATE OR DELETE ON cabinet_tokens
  FOR EACH ROW EXECUTE FUNCTION credential_notify('tenant_id');

CREATE TRIGGER tenant_limits_credential_notify
  AFTER INSERT OR UPDATE OR DELETE ON tenant_limits
  FOR EACH ROW EXECUTE FUNCTION credential_notify('tenant_id');

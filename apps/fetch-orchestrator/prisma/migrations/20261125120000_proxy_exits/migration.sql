-- The proxy networks' exits: upstream HTTP(S) CONNECT proxies the platform team configures with
-- the admin command (`./dev admin proxy-add ...`). The URL with its credentials is sealed at rest
-- (AES-256-GCM, the service's at-rest key); `endpoint` is host:port only, what listings show.
CREATE TABLE "proxy_exits" (
    "id" UUID NOT NULL,
    "label" TEXT NOT NULL,
    "network_class" TEXT NOT NULL,
    "endpoint" TEXT NOT NULL,
    "url_sealed" TEXT NOT NULL,
    "country" CHAR(2),
    "country_authoritative" BOOLEAN NOT NULL DEFAULT false,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "proxy_exits_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "proxy_exits_network_class_check" CHECK ("network_class" IN ('datacenter', 'residential', 'premium')),
    CONSTRAINT "proxy_exits_country_check" CHECK ("country" ~ '^[A-Z]{2}$')
);

CREATE UNIQUE INDEX "proxy_exits_label_key" ON "proxy_exits"("label");

-- Every orchestrator replica keeps the exits in memory; a change is announced at commit so each
-- reloads at once (domain/proxies/pool.ts) instead of routing through a removed exit.
CREATE FUNCTION proxy_exits_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('wdr_proxy_exits', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER proxy_exits_changed
  AFTER INSERT OR UPDATE OR DELETE ON proxy_exits
  FOR EACH STATEMENT EXECUTE FUNCTION proxy_exits_notify();

-- Proxy traffic of a stage that handed the request on (auto's HTTP stage escalating to the
-- browser): added to the next stage's traffic in the one settlement the request gets.
ALTER TABLE "data_requests" ADD COLUMN "traffic_carried" JSONB;

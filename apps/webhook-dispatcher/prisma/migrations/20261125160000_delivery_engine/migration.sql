-- The delivery engine (docs/architecture.md, "Webhooks"): endpoints, one message per event per
-- endpoint with its durable schedule, and every delivery attempt.

-- An endpoint: where a tenant's events go. project_id / environment_id are opaque identifiers until
-- projects exist (NULL: the endpoint takes the tenant's events of its types from everywhere). The URL
-- and the signing secrets are sealed (AES-256-GCM, WEBHOOK_SECRET_KEY, endpoint id as associated data);
-- only the URL's origin is stored in clear, for listings.
CREATE TABLE "webhook_endpoints" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "project_id" TEXT,
    "environment_id" TEXT,
    "url_sealed" TEXT NOT NULL,
    "url_origin" TEXT NOT NULL,
    "event_types" TEXT[] NOT NULL,
    "description" TEXT,
    "status" TEXT NOT NULL DEFAULT 'enabled',
    "disabled_reason" TEXT,
    "disabled_at" TIMESTAMPTZ(3),
    "secret_sealed" TEXT NOT NULL,
    -- After a rotation the previous secret still signs (a second signature) until this time.
    "previous_secret_sealed" TEXT,
    "previous_secret_expires_at" TIMESTAMPTZ(3),
    "last_success_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_endpoints_status_check" CHECK ("status" IN ('enabled', 'disabled')),
    CONSTRAINT "webhook_endpoints_event_types_check" CHECK (cardinality("event_types") >= 1)
);
CREATE INDEX "webhook_endpoints_tenant_id_created_at_id_idx" ON "webhook_endpoints"("tenant_id", "created_at", "id");

-- One message per (endpoint, source event): the fan-out inserts ON CONFLICT DO NOTHING, so a
-- redelivered Kafka event never makes a second message. The body is the exact JSON sent (text,
-- so its bytes, and therefore what receivers see under one webhook-id, never change).
-- The schedule is next_attempt_at: due when <= now(). While a sender holds a message,
-- claimed_until (= next_attempt_at) is its lease; a sender that dies leaves the message due again
-- when the lease ends.
CREATE TABLE "webhook_messages" (
    "id" UUID NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "event_id" UUID NOT NULL,
    "event_type" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    -- Position in the retry schedule (a manual redelivery starts it again; attempts keeps counting).
    "schedule_step" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3),
    "claimed_until" TIMESTAMPTZ(3),
    "claim_token" UUID,
    "first_attempt_at" TIMESTAMPTZ(3),
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_messages_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_messages_status_check" CHECK ("status" IN ('pending', 'delivered', 'failed')),
    CONSTRAINT "webhook_messages_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE
);
CREATE UNIQUE INDEX "webhook_messages_endpoint_id_event_id_key" ON "webhook_messages"("endpoint_id", "event_id");
-- The sender's claim: due messages of one endpoint, oldest first (pending ones only).
CREATE INDEX "webhook_messages_due_idx" ON "webhook_messages"("endpoint_id", "next_attempt_at") WHERE "status" = 'pending';

-- Every attempt, as the listing shows it: status code, latency, a truncated redacted response, an error.
CREATE TABLE "webhook_attempts" (
    "id" UUID NOT NULL,
    "message_id" UUID NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "attempt" INTEGER NOT NULL,
    "outcome" TEXT NOT NULL,
    "status_code" INTEGER,
    "latency_ms" INTEGER NOT NULL,
    "response_excerpt" TEXT,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_attempts_outcome_check" CHECK ("outcome" IN ('delivered', 'failed')),
    CONSTRAINT "webhook_attempts_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "webhook_messages"("id") ON DELETE CASCADE
);
CREATE INDEX "webhook_attempts_endpoint_id_created_at_id_idx" ON "webhook_attempts"("endpoint_id", "created_at" DESC, "id" DESC);
CREATE INDEX "webhook_attempts_message_id_idx" ON "webhook_attempts"("message_id");

-- Wake the senders at commit: every statement that inserts messages (the fan-out) notifies
-- `wdr_webhooks` with this schema's name, as outbox_messages does for the relay. A fan-out that
-- matched no endpoint (most request events) inserts nothing and wakes nobody.
CREATE FUNCTION webhook_messages_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM inserted) THEN
    PERFORM pg_notify('wdr_webhooks', TG_TABLE_SCHEMA);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER webhook_messages_notify
  AFTER INSERT ON webhook_messages
  REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_messages_notify();

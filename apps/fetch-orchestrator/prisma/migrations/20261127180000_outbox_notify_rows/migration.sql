-- The relay is woken only by a statement that inserted outbox rows. A statement trigger fires even
-- when its INSERT wrote nothing, and here that is common: lifecycle mirrors of a tenant nobody
-- listens to are dropped by outbox_lifecycle_mirror (BEFORE INSERT), so a request's start move and
-- the reflection of its settlement, which write only mirrors, each woke the relay for a round that
-- found nothing (two statements and the relay lock, about two per browser page). The transition
-- table holds only the rows really inserted.
CREATE OR REPLACE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM inserted) THEN
    PERFORM pg_notify('wdr_outbox', TG_TABLE_SCHEMA);
  END IF;
  RETURN NULL;
END
$$;

DROP TRIGGER outbox_messages_notify ON outbox_messages;
CREATE TRIGGER outbox_messages_notify
  AFTER INSERT ON outbox_messages
  REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();

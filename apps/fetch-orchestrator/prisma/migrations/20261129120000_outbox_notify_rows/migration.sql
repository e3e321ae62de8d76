-- Wake the outbox relay only for a statement that inserted rows. The statement trigger fired for
-- every INSERT INTO outbox_messages, including the many that insert none (a move whose lifecycle
-- mirror has no listener, an admission refused inside its statement): each such commit woke every
-- replica's relay for a round (two statements) that found nothing. The inserted rows are read from
-- the statement's transition table; the notification itself is unchanged (delivered at commit,
-- never on rollback, repeats within a transaction folded into one). See OutboxRelay in @wdr/kit.
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

-- Wake the outbox relay at commit instead of polling: every statement that inserts outbox rows
-- notifies `wdr_outbox` with this schema's name (Postgres delivers it when the transaction commits,
-- never on rollback, and folds repeats within one transaction into one). See OutboxRelay in @wdr/kit.
CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('wdr_outbox', TG_TABLE_SCHEMA);
  RETURN NULL;
END
$$;

CREATE TRIGGER outbox_messages_notify
  AFTER INSERT ON outbox_messages
  FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();

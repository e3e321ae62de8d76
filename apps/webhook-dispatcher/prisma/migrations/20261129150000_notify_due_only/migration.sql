-- Wake the senders only for messages they can claim. A message delivered directly is inserted
-- already delivered (domain/direct.ts), and one whose direct POST failed or ran long is inserted
-- held by its sender: neither is due, so waking every replica's sender for a claim that would find
-- nothing (and the notification queue's lock at each commit) is left out. Messages inserted due
-- (the queue's fan-out, a notice, a spilled direct message) notify as before.
CREATE OR REPLACE FUNCTION webhook_messages_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM inserted WHERE status = 'pending' AND claim_token IS NULL) THEN
    PERFORM pg_notify('wdr_webhooks', TG_TABLE_SCHEMA);
  END IF;
  RETURN NULL;
END
$$;

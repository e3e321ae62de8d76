-- Request events are an append-only history: rows are never updated.
CREATE FUNCTION "request_events_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'request events are append-only';
END;
$$;

CREATE TRIGGER "request_events_no_update"
  BEFORE UPDATE ON "request_events"
  FOR EACH ROW EXECUTE FUNCTION "request_events_append_only"();

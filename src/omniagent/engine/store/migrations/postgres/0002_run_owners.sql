-- Run ownership (engine/store/ownership.py), as sqlite/0002_run_owners.sql. Lease times are the server's clock
-- (`now()`), so the machines of a fleet need not agree on theirs. `run_owner()` names the owner serving the
-- connection: each pooled connection sets `omniagent.run_owner` when it opens (postgres.py), as SQLite's
-- connection registers a function of the same name.
CREATE TABLE owners (
    id TEXT PRIMARY KEY,
    pid BIGINT NOT NULL,
    host TEXT NOT NULL,
    started_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT NOT NULL
);
ALTER TABLE sessions ADD COLUMN open_run_owner TEXT;
ALTER TABLE runs ADD COLUMN owner TEXT;
CREATE FUNCTION run_owner() RETURNS TEXT LANGUAGE sql STABLE
    AS $$ SELECT current_setting('omniagent.run_owner', true) $$;
-- Live events across processes: every committed event tells the listeners which session and sequence it was (and
-- which owner wrote it), never its payload; a listener reads the events from this table (postgres_events.py).
CREATE FUNCTION notify_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('omniagent_events', coalesce(run_owner(), '') || ' ' || NEW.seq || ' ' || NEW.session_id);
    RETURN NULL;
END $$;
CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION notify_event();

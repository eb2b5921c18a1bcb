-- Which process wrote each event, as sqlite/0006_event_owners.sql.
ALTER TABLE events ADD COLUMN owner TEXT;

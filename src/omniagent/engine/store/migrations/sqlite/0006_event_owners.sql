-- Which process wrote each event (its run owner, ownership.py): a process relaying the events other processes of a
-- shared store commit (engine/event_log.py) skips its own, which it broadcast itself. NULL: before this step.
ALTER TABLE events ADD COLUMN owner TEXT;

-- Child sessions (docs/engine.md "Child sessions"): a child's name is unique among its parent's children, so the
-- parent's tools can address it by name. Roots and forks have no name.
CREATE UNIQUE INDEX sessions_child_name ON sessions (parent_id, name) WHERE parent_id IS NOT NULL;

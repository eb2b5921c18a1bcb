"""Child sessions: the tree (spawn, instruct, stop, settle), the reports a child sends its parent, and the limits."""

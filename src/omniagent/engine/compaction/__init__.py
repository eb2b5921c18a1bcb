"""Compaction: the rules (when and where to cut, as pure functions) and one compaction step of a run."""

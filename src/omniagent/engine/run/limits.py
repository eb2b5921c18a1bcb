"""The limits of child sessions (docs/engine.md "Child sessions") and the rounds of a root session's run, and
reading them from the environment.

yuke's agents.json holds only the model slots (and is parsed strictly), so these are engine settings:
`OMNIAGENT_CHILD_MAX_DEPTH`, `OMNIAGENT_CHILD_MAX_CONCURRENT`, `OMNIAGENT_CHILD_MAX_ROUNDS` and
`OMNIAGENT_MAX_ROUNDS`, each a positive integer; anything else keeps the default.

They live with the runs, which enforce them (admission counts a tree's active children; the executor gives the agent
tools only to a session less than `max_depth` below its root), and the child tree (`children/tree.py`, above the runs)
reads them from here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_MAX_DEPTH = 1  # direct children only: a child gets no agent tools
DEFAULT_MAX_CONCURRENT = 8  # active children per tree; more wait in the durable queue


@dataclass(frozen=True, slots=True)
class ChildLimits:
    """`max_depth`: how far below its root a session may be created (1 = children, no grandchildren).
    `max_concurrent`: children of one tree that may run at once. `max_rounds`: the rounds a child run the agent
    tools start may take (None: no cap, as for a root session)."""

    max_depth: int = DEFAULT_MAX_DEPTH
    max_concurrent: int = DEFAULT_MAX_CONCURRENT
    max_rounds: int | None = None

    @classmethod
    def from_env(cls) -> ChildLimits:
        """The limits `OMNIAGENT_CHILD_MAX_*` set (docs/engine.md)."""
        return cls(
            max_depth=_positive("OMNIAGENT_CHILD_MAX_DEPTH") or DEFAULT_MAX_DEPTH,
            max_concurrent=_positive("OMNIAGENT_CHILD_MAX_CONCURRENT") or DEFAULT_MAX_CONCURRENT,
            max_rounds=_positive("OMNIAGENT_CHILD_MAX_ROUNDS"),
        )


def root_max_rounds() -> int | None:
    """The rounds a run of a root session created without its own `max_rounds` may take (`OMNIAGENT_MAX_ROUNDS`;
    None: no cap). The faces (`acp`, `serve`, `run`, the hub) create sessions with no `max_rounds` of their own, so
    this is how their sessions get one."""
    return _positive("OMNIAGENT_MAX_ROUNDS")


def _positive(name: str) -> int | None:
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return None
    return value if 0 < value <= 2**31 - 1 else None

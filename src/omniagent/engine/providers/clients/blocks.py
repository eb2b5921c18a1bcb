"""Block numbering for stream decoders: one open block at a time, indices 0, 1, 2, … in order of appearance.

Wires delimit content differently (Anthropic indices, Chat delta fields, Responses output items); each decoder names
its blocks with a wire-specific key and this tracker turns keys into the neutral contract of `neutral.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from omniagent.engine.providers.neutral import BlockEnded, StreamEvent


class BlockTracker:
    """Opens and closes neutral blocks for wire-specific keys."""

    def __init__(self) -> None:
        self._next_index = 0
        self._open_key: Hashable | None = None
        self._open_index: int | None = None
        self.seen: set[Hashable] = set()

    def ensure(self, key: Hashable, opener: Callable[[int], StreamEvent]) -> list[StreamEvent]:
        """Events that make `key` the open block: none if it already is, else the previous block's end + `opener`."""
        if self._open_index is not None and self._open_key == key:
            return []
        events = self.close()
        index = self._next_index
        self._next_index += 1
        self._open_key, self._open_index = key, index
        self.seen.add(key)
        events.append(opener(index))
        return events

    def index_of(self, key: Hashable) -> int | None:
        """The neutral index of `key` if it is the open block."""
        return self._open_index if self._open_key == key else None

    def close(self) -> list[StreamEvent]:
        """End the open block, if any."""
        if self._open_index is None:
            return []
        index = self._open_index
        self._open_key, self._open_index = None, None
        return [BlockEnded(index)]

"""Errors raised by the wire layer."""

from __future__ import annotations

from omniagent.errors import OmniagentError


class WireError(OmniagentError):
    """Base class for framing and transport failures."""


class LineTooLarge(WireError):
    """A line exceeded the reader's size cap; the reader skipped it and goes on with the next line."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"line exceeds {limit} bytes")
        self.limit = limit


class PeerClosed(WireError):
    """The other side closed its end of the stream."""

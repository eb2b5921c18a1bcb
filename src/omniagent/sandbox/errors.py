"""The sandbox's one error: it cannot start here."""

from __future__ import annotations

from omniagent.errors import OmniagentError

__all__ = ["SandboxUnavailable"]


class SandboxUnavailable(OmniagentError):
    """The sandbox cannot start here; the message is the sentence the model (and through it the user) reads."""

"""The open interactions of one engine: each asks the frontend something mid-run (`interaction.requested`) and waits
for one answer, from any frontend (`interaction.respond` on the yuke wire, or a direct call in process).

Two kinds share this registry and its one id sequence: the permission asks before a guarded tool
(`permissions.py`) and the model's own questions to the user (`questions.py`, the `ask_user` tool). Each open
interaction knows the request it broadcast and how to read a wire response to it; this module numbers them,
broadcasts them, finds them by id, turns a stale answer into `unknown_interaction`, and answers an interaction
whose waiter went away (a cancelled run) with its kind's "canceled", so a late answer finds nothing open.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Protocol, TypeVar

from omniagent.engine.broadcast import Broadcaster
from omniagent.engine.errors import EngineError
from omniagent.protocols.yuke.base import Empty
from omniagent.protocols.yuke.interactions import (
    InteractionRequest,
    InteractionRequestedData,
    InteractionRespondParams,
    InteractionResponse,
)

T = TypeVar("T")


class OpenInteraction(Protocol):
    """One interaction waiting for its answer."""

    @property
    def interaction_id(self) -> int: ...

    @property
    def session_id(self) -> str: ...

    def answered(self) -> bool:
        """Whether an answer was already taken."""

    def respond(self, response: InteractionResponse) -> None:
        """Take a wire answer. Raises `EngineError` bad_request when it does not fit the request."""


class Interactions:
    """The open interactions of every session of one engine."""

    def __init__(self, broadcaster: Broadcaster) -> None:
        self._broadcaster = broadcaster
        self._open: dict[int, OpenInteraction] = {}
        self._ids = itertools.count(1)

    def new_id(self) -> int:
        """The next interaction id (never reused while the process runs)."""
        return next(self._ids)

    def get(self, interaction_id: int) -> OpenInteraction | None:
        """The open interaction with this id, if any."""
        return self._open.get(interaction_id)

    async def wait(
        self, interaction: OpenInteraction, request: InteractionRequest, answer: asyncio.Future[T], canceled: T
    ) -> T:
        """Broadcast `request` for `interaction` and wait for `answer`. Cancelling the caller answers `canceled`."""
        self._open[interaction.interaction_id] = interaction
        try:
            self._broadcaster.emit(
                "interaction.requested",
                InteractionRequestedData(
                    interaction_id=interaction.interaction_id, request=request, session_id=interaction.session_id
                ),
            )
            # Shielded: a cancelled run must leave the future to be answered `canceled` below, not cancelled.
            return await asyncio.shield(answer)
        finally:
            del self._open[interaction.interaction_id]
            if not answer.done():
                answer.set_result(canceled)

    def check_open(self, interaction_id: int) -> OpenInteraction:
        """The interaction still waiting for an answer.

        Raises:
            EngineError: unknown_interaction (never asked, or already answered).
        """
        interaction = self._open.get(interaction_id)
        if interaction is None or interaction.answered():
            raise EngineError.unknown_interaction()
        return interaction

    async def respond(self, params: InteractionRespondParams) -> Empty:
        """interaction.respond: the answer must fit the request's kind (`canceled` always does)."""
        self.check_open(params.interaction_id).respond(params.response)
        return Empty()

"""The engine's permission state (`engine/interactions/permissions.py`; issue "One system" part 2): which calls ask,
what an answer does, and that a cancelled wait answers its ask `canceled`. Broadcasts are observed as a subscriber."""

from __future__ import annotations

import asyncio

import pytest

from omniagent.engine.broadcast import Broadcaster
from omniagent.engine.errors import EngineError
from omniagent.engine.interactions.permissions import Decision, Permissions, describe
from omniagent.engine.interactions.registry import Interactions
from omniagent.protocols.yuke.base import YukeModel, decode
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.interactions import InteractionConfirm, InteractionRequestedData, InteractionRespondParams

SID = "a" * 32
WAIT = 5.0


class Seen(list[InteractionRequestedData]):
    """The interaction.requested broadcasts, with an event set on each."""

    def __init__(self) -> None:
        super().__init__()
        self.changed = asyncio.Event()

    def __call__(self, name: str, data: YukeModel) -> None:
        if isinstance(data, InteractionRequestedData):
            self.append(data)
            self.changed.set()


def _parts() -> tuple[Permissions, Interactions, Seen]:
    broadcaster = Broadcaster()
    seen = Seen()
    broadcaster.subscribe(seen)
    interactions = Interactions(broadcaster)
    return Permissions(interactions), interactions, seen


def _permissions() -> tuple[Permissions, Seen]:
    permissions, _, seen = _parts()
    return permissions, seen


async def _asked(seen: Seen, count: int) -> InteractionRequestedData:
    async with asyncio.timeout(WAIT):
        while len(seen) < count:
            seen.changed.clear()
            await seen.changed.wait()
    return seen[count - 1]


def test_ask_mode_guards_exec_write_and_edit_only_and_auto_mode_guards_nothing() -> None:
    """Part 2: ask is the default and guards exec, write and edit; read and search never ask; auto never asks."""
    permissions, _ = _permissions()
    assert permissions.mode(SID) == "ask"
    assert [permissions.needs_confirm(SID, t) for t in ("exec", "write", "edit", "read", "search")] == [
        True,
        True,
        True,
        False,
        False,
    ]
    permissions.set_mode(SID, "auto")
    assert not any(permissions.needs_confirm(SID, t) for t in ("exec", "write", "edit"))


async def test_an_unsandboxed_exec_asks_in_auto_mode_and_a_sandboxed_always_does_not_cover_it() -> None:
    """Issue 9 part 1: outside the sandbox exec asks in every mode; "always" given to a sandboxed exec does not
    carry over, one given to an unsandboxed ask does."""
    permissions, seen = _permissions()
    first = asyncio.create_task(permissions.open_interaction(SID, 2, 0, "exec", '{"command":"ls"}'))
    permissions.answer((await _asked(seen, 1)).interaction_id, Decision.ALLOW_ALWAYS)
    assert await first is Decision.ALLOW_ALWAYS
    permissions.set_mode(SID, "auto")
    assert not permissions.needs_confirm(SID, "exec")
    assert permissions.needs_confirm(SID, "exec", unsandboxed=True)
    second = asyncio.create_task(permissions.open_interaction(SID, 3, 0, "exec", '{"command":"ls"}', unsandboxed=True))
    asked = await _asked(seen, 2)
    assert asked.request == InteractionConfirm(
        title="Run a command without the sandbox?", message="Run `ls` in the workspace, outside the sandbox."
    )
    permissions.answer(asked.interaction_id, Decision.ALLOW_ALWAYS)
    assert await second is Decision.ALLOW_ALWAYS
    assert not permissions.needs_confirm(SID, "exec", unsandboxed=True)


async def test_allow_always_is_remembered_for_that_session_and_tool() -> None:
    """Part 2: "always" is remembered for the session: that tool stops asking there, other tools and other
    sessions still ask."""
    permissions, seen = _permissions()
    task = asyncio.create_task(permissions.open_interaction(SID, 2, 0, "exec", '{"command":"ls"}'))
    asked = await _asked(seen, 1)
    assert asked.session_id == SID and asked.request == InteractionConfirm(
        title="Run a command?", message="Run `ls` in the workspace."
    )
    assert permissions.pending(asked.interaction_id) is not None
    permissions.answer(asked.interaction_id, Decision.ALLOW_ALWAYS)
    assert await task is Decision.ALLOW_ALWAYS
    assert not permissions.needs_confirm(SID, "exec")
    assert permissions.needs_confirm(SID, "write") and permissions.needs_confirm("b" * 32, "exec")
    assert permissions.pending(asked.interaction_id) is None


async def test_cancelling_the_wait_answers_the_ask_canceled_and_later_answers_are_unknown() -> None:
    """Part 2: a cancelled run answers its pending ask as canceled (watchers of the answer see CANCELED); a
    late answer is unknown_interaction."""
    permissions, seen = _permissions()
    task = asyncio.create_task(permissions.open_interaction(SID, 2, 0, "write", '{"path":"a.txt","content":""}'))
    asked = await _asked(seen, 1)
    answer = permissions.pending(asked.interaction_id)
    assert answer is not None
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert answer.answer.result() is Decision.CANCELED
    with pytest.raises(EngineError) as late:
        permissions.answer(asked.interaction_id, Decision.ALLOW_ONCE)
    assert late.value.code == ErrorCode.UNKNOWN_INTERACTION


async def test_the_yuke_confirm_maps_to_allow_once_or_reject() -> None:
    """Confirm true = allow once, false = reject; a confirm cannot say "always"."""
    permissions, interactions, seen = _parts()
    for value, expected in ((True, Decision.ALLOW_ONCE), (False, Decision.REJECT)):
        task = asyncio.create_task(permissions.open_interaction(SID, 2, 0, "edit", "{}"))
        asked = await _asked(seen, len(seen) + 1)
        await interactions.respond(
            decode(
                InteractionRespondParams,
                {"interaction_id": asked.interaction_id, "response": {"type": "confirm", "value": value}},
            )
        )
        assert await task is expected
    assert permissions.needs_confirm(SID, "edit")


def test_the_ask_text_names_the_command_or_the_path() -> None:
    """The confirm's title and message come from the call's own arguments; bad JSON still gets a sentence."""
    assert describe("exec", '{"command":"make test"}') == ("Run a command?", "Run `make test` in the workspace.")
    assert describe("edit", '{"path":"src/a.py"}') == ("Edit a file?", "Edit src/a.py in the workspace.")
    assert describe("write", "not json") == ("Allow write?", "The model wants to call write.")

"""A resumed or forked engine session opened with `history` first tells its stored conversation as the events its live
turns showed, with the same ids, outside any turn: the engine in process against the fake LLM, each runtime a new
one (the engine closes with the first), every event checked against the schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniagent.protocols.sidecar.commands import PermissionMode
from omniagent.protocols.sidecar.events import (
    Event,
    EventKind,
    MessageEnded,
    ReasoningDelta,
    TextDelta,
    ToolStatus,
    ToolUpdated,
    TurnStarted,
    UserMessage,
)
from omniagent.runtime.session import Session
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.runtime.adapters.engine.harness import bodies, collect, one_turn, open_engine, runtime, use_engine, workspace
from tests.sidecar_schema import validate

PROMPT = "write hello.txt"


def _scenario() -> Scenario:
    write = FakeToolCall("write", {"path": "hello.txt", "content": "hello\n"})
    return Scenario(
        [Reply(reasoning="A file, then.", text="Writing it.", tool_calls=(write,)), Reply(text="All done.")],
        fallback=Reply(text="Again."),
    )


def _as_told(live: list[Event]) -> list[tuple[EventKind, dict[str, object]]]:
    """What a history should say of a live turn: its prompt, each message's reasoning and text whole, each tool call
    once (where it first showed) with its last snapshot, the message ends; nothing of the turn's bookkeeping."""
    told: list[tuple[EventKind, dict[str, object]]] = [(UserMessage(message_id="m1", text=PROMPT), {})]
    tools: dict[str, int] = {}
    for event in live:
        kind = event.kind
        if isinstance(kind, TextDelta | ReasoningDelta):
            last = told[-1][0]
            if isinstance(last, type(kind)) and last.message_id == kind.message_id:
                told[-1] = (type(kind)(message_id=kind.message_id, text=last.text + kind.text), {})
            else:
                told.append((kind, {}))
        elif isinstance(kind, ToolUpdated):
            if kind.tool.id in tools:
                told[tools[kind.tool.id]] = (kind, {})
            else:
                tools[kind.tool.id] = len(told)
                told.append((kind, {}))
        elif isinstance(kind, MessageEnded):
            told.append((kind, dict(event.extensions)))
    return told


async def _told(session: Session, count: int) -> list[Event]:
    """The first `count` events of a session just opened (its history is in the stream when `open` returns)."""
    assert session.events.unread >= count
    events = [await anext(aiter(session.events)) for _ in range(count)]
    for event in events:
        validate("Event", event.dump())
    return events


async def test_a_session_resumed_with_history_tells_its_conversation_with_the_live_ids_and_no_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = workspace(tmp_path)
    async with FakeLLMServer(_scenario()) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws, permission_mode=PermissionMode.AUTO_APPROVE)
            await session.prompt(PROMPT)
            live = await one_turn(session)
            token = session.info().resume_token
        assert token is not None and (ws / "hello.txt").read_text() == "hello\n"
        expected = _as_told(live)
        assert [type(kind).__name__ for kind, _ in expected] == [
            "UserMessage",
            "ReasoningDelta",
            "TextDelta",
            "ToolUpdated",
            "MessageEnded",
            "TextDelta",
            "MessageEnded",
        ]
        [write] = [kind.tool for kind, _ in expected if isinstance(kind, ToolUpdated)]
        assert write.status is ToolStatus.COMPLETED and write.diffs and write.output

        async with runtime() as rt:
            resumed = await open_engine(rt, ws, resume=token, history=True)
            told = await _told(resumed, len(expected))
            assert [(e.kind, e.extensions) for e in told] == expected
            assert [e.sequence for e in told] == list(range(1, len(told) + 1))
            assert all(e.turn_info is None for e in told)
            # The conversation goes on: the first prompt of this life starts turn t1, after the history.
            await resumed.prompt("and again")
            again = await one_turn(resumed)
            started = again[0]
            assert isinstance(started.kind, TurnStarted) and started.turn_info is not None
            assert started.turn_info.id == "t1" and started.sequence > len(told)

            # Without `history`, a resumed session tells nothing before its first turn (as before).
            plain = await open_engine(rt, ws, resume=token)
            await plain.prompt("once more")
            first = (await collect(plain, lambda e: True))[0]
            assert isinstance(first.kind, TurnStarted)
            await one_turn(plain)

            # A fork keeps the conversation's message ids: its history is the source's, as far as it was copied.
            fork = await open_engine(rt, ws, fork=token, fork_at="m2", history=True)
            fork_told = await _told(fork, 5)
            assert [(e.kind, e.extensions) for e in fork_told] == expected[:5]
            assert isinstance(fork_told[-1].kind, MessageEnded) and fork_told[-1].kind.message_id == "m2"
            await fork.prompt("which file?")
            before = await collect(fork, lambda e: isinstance(e.kind, TurnStarted))
            assert not [e for e in before if isinstance(e.kind, TextDelta | MessageEnded | UserMessage)]
            await one_turn(fork)
        sent = await bodies(llm, 3)
    assert PROMPT in str(sent[2]["messages"]) and "and again" in str(sent[2]["messages"])

"""Rollback of our engine through the `Runtime` (issue 12 part 3): `rollback(n, scope)` is the engine's
`session.rewind` before the n-th last prompt; `ConversationAndFiles` also puts back the files the engine's tools
changed since. Every event is checked against the anyagent schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omniagent.protocols.sidecar.agents import Capability
from omniagent.protocols.sidecar.base import DiagnosticLevel
from omniagent.protocols.sidecar.commands import RollbackScope
from omniagent.protocols.sidecar.events import Completed, DiagnosticEvent, TurnEnded
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.runtime.adapters.engine.harness import bodies, of, one_turn, open_engine, runtime, use_engine, workspace


def _write(path: str, content: str) -> Reply:
    return Reply(tool_calls=(FakeToolCall("write", {"path": path, "content": content}),))


def _edit(path: str, old: str, new: str) -> Reply:
    return Reply(tool_calls=(FakeToolCall("edit", {"path": path, "old_string": old, "new_string": new}),))


async def test_rollback_with_files_undoes_the_last_turns_conversation_and_edits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Turn 1 writes plan.md, turn 2 edits it and writes extra.md. Rolling back one turn with files restores
    plan.md and removes extra.md, and the model no longer sees turn 2; a conversation-only rollback of the last
    remaining turn leaves the files."""
    ws = workspace(tmp_path)
    scenario = Scenario(
        [
            _write("plan.md", "step one\n"),
            Reply(text="PLAN-WRITTEN"),
            _edit("plan.md", "one", "two"),
            _write("extra.md", "x\n"),
            Reply(text="EDITED-MARKER"),
            Reply(text="after the rollback"),
            Reply(text="after the second rollback"),
        ]
    )
    async with FakeLLMServer(scenario) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws, configure={"mode": "auto"})
            features = session.info().details.capabilities.features
            assert Capability.ROLLBACK in features and Capability.ROLLBACK_FILES in features
            await session.prompt("write the plan")
            await one_turn(session)
            await session.prompt("SECOND-PROMPT edit it")
            await one_turn(session)
            assert (ws / "plan.md").read_text() == "step two\n" and (ws / "extra.md").exists()

            await session.rollback(1, RollbackScope.CONVERSATION_AND_FILES)
            await session.prompt("go on")
            events = await one_turn(session)
            assert (ws / "plan.md").read_text() == "step one\n" and not (ws / "extra.md").exists()

            await session.rollback(2, RollbackScope.CONVERSATION)
            await session.prompt("from scratch")
            await one_turn(session)
        sent = [json.dumps(body["messages"]) for body in await bodies(llm, 7)]
    assert of(events, TurnEnded)[-1].stop == Completed()
    assert "PLAN-WRITTEN" in sent[5] and "SECOND-PROMPT" not in sent[5] and "EDITED-MARKER" not in sent[5]
    assert "PLAN-WRITTEN" not in sent[6] and "go on" not in sent[6]
    assert (ws / "plan.md").read_text() == "step one\n"  # conversation only: the files stay


async def test_rolling_back_more_turns_than_the_session_has_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = workspace(tmp_path)
    async with FakeLLMServer(Scenario([Reply(text="hi"), Reply(text="still here")])) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws)
            await session.prompt("hello")
            await one_turn(session)
            await session.rollback(3, RollbackScope.CONVERSATION_AND_FILES)
            await session.prompt("again")
            events = await one_turn(session)
        sent = json.dumps((await bodies(llm, 2))[1]["messages"])
    warnings = [e.diagnostic for e in of(events, DiagnosticEvent) if e.diagnostic.level is DiagnosticLevel.WARNING]
    assert [w.message for w in warnings] == ["cannot roll back 3 turn(s): the session has 1"]
    assert "hello" in sent  # nothing was rolled back

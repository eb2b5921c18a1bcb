"""Issue 20: a turn with child agents ends the same way through both faces of the engine that show turns, the ACP
agent (`omniagent acp`, v2) and the runtime's engine adapter (`Runtime`), because both render the engine's one
`Subscription`: the same scenario is played through each, and what a user sees of the turn's end is compared.

The scenario: the parent spawns two children in one round; alpha reads a file and reports, which starts a report
turn of the parent ("Waiting for the other agent."); beta is held until released. The turn must not end while beta
works, must end exactly once after beta's report turn ("Both agents reported."), and a cancel while a child works
ends it once, cancelled, in both faces.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.acp import v2
from omniagent.protocols.sidecar.events import Cancelled, Completed, TextDelta, TurnEnded
from omniagent.runtime.adapters.acp.client import ClientHandlers, PermissionRequest, SessionEvent, open_acp_client
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.faces.acp.agent_harness import agent_argv, agent_env, prepare
from tests.runtime.adapters.engine.harness import collect, of, open_engine, runtime, use_engine, workspace

WAIT = 30.0  # seconds: bound on every test body
REPORT = "Report from the child agent"
FACES = ["acp", "runtime"]


@dataclass(frozen=True)
class TurnSeen:
    """A face's turn, as a user sees its end: the parent's own text, how many times it ended, and how."""

    text: str
    ends: int
    stop: str  # "completed" / "cancelled"


def _spawn(name: str, task: str) -> FakeToolCall:
    return FakeToolCall("spawn_agent", {"name": name, "task": task}, f"call_{name}")


def _two_children() -> list[Reply]:
    return [
        Reply(text="Both agents reported.", match="BETA-DONE", sticky=True),
        Reply(text="Waiting for the other agent.", match=REPORT, sticky=True),
        Reply(tool_calls=(_spawn("alpha", "TASK-ALPHA"), _spawn("beta", "TASK-BETA")), match="PARENT-GO"),
        Reply(text="Reading.", tool_calls=(FakeToolCall("read", {"path": "a.txt"}, "call_r"),), match="TASK-ALPHA"),
        Reply(text="ALPHA-DONE", match="call_r"),
        Reply(text="BETA-DONE", match="TASK-BETA", gate="beta"),
    ]


def _one_stuck_child() -> list[Reply]:
    return [
        Reply(text="A report woke me.", match=REPORT, sticky=True),
        Reply(tool_calls=(_spawn("alpha", "TASK-ALPHA"),), match="PARENT-GO"),
        Reply(text="x" * 400, chunk_size=2, match="TASK-ALPHA", gate="never", hold_after_events=3),
    ]


# A step the scenario takes mid-turn, given a way to wait for the parent's text and to cancel the turn.
Step = Callable[["Controls"], Awaitable[None]]


@dataclass
class Controls:
    llm: FakeLLMServer
    wait_text: Callable[[str], Awaitable[None]]
    cancel: Callable[[], Awaitable[None]]
    ended: Callable[[], bool]


async def _release_beta_after_alpha_reports(c: Controls) -> None:
    assert await c.llm.wait_held_async("beta")
    await c.wait_text("Waiting for the other agent.")  # alpha's report turn is over; beta still works
    assert not c.ended()
    c.llm.release("beta")


async def _cancel_while_the_child_works(c: Controls) -> None:
    assert await c.llm.wait_held_async("never")
    assert not c.ended()
    await c.cancel()


async def _through_acp(tmp_path: Path, llm: FakeLLMServer, step: Step) -> TurnSeen:
    data, ws, log = prepare(tmp_path, llm)
    (ws / "a.txt").write_text("alpha reads this\n")
    raw: list[dict[str, Any]] = []
    changed = asyncio.Event()

    async def on_update(event: SessionEvent) -> None:
        raw.append(dict(event.raw))
        changed.set()

    async def on_permission(_request: PermissionRequest) -> str | None:
        return "allow_once"

    def text() -> str:
        return "".join(r["content"]["text"] for r in raw if r["sessionUpdate"] == "agent_message_chunk")

    def idles() -> list[dict[str, Any]]:
        return [r for r in raw if r["sessionUpdate"] == "state_update" and r["state"] == "idle"]

    async def wait_text(wanted: str) -> None:
        while wanted not in text():
            changed.clear()
            await changed.wait()

    handlers = ClientHandlers(on_update=on_update, on_permission=on_permission)
    async with open_acp_client(agent_argv(data, log), handlers=handlers, env=agent_env()) as acp:
        session = await acp.new_session(str(ws))
        turn = asyncio.ensure_future(acp.prompt(session.session_id, [v2.ContentBlockText(text="PARENT-GO")]))

        async def cancel() -> None:
            await acp.cancel(session.session_id)

        await step(Controls(llm, wait_text, cancel, lambda: bool(idles()) or turn.done()))
        end = await turn
        while not idles():  # v2: the prompt's `{}` comes first; the turn's end is the `idle` state update
            changed.clear()
            await changed.wait()
    stops = {"end_turn": "completed", "cancelled": "cancelled"}
    assert [i["stopReason"] for i in idles()] == [end.stop_reason]
    return TurnSeen(text(), len(idles()), stops[end.stop_reason])


async def _through_runtime(tmp_path: Path, llm: FakeLLMServer, step: Step, monkeypatch: pytest.MonkeyPatch) -> TurnSeen:
    ws = workspace(tmp_path)
    (ws / "a.txt").write_text("alpha reads this\n")
    use_engine(monkeypatch, tmp_path, llm)
    async with runtime() as rt:
        session = await open_engine(rt, ws)
        await session.prompt("PARENT-GO")
        seen: list[Any] = []
        stream = _events(session, seen)

        def text() -> str:
            return "".join(
                e.kind.text
                for e in seen
                if isinstance(e.kind, TextDelta) and (e.turn_info is None or not e.turn_info.parent_tool_id)
            )

        async def wait_text(wanted: str) -> None:
            while wanted not in text():
                await anext(stream)

        async def cancel() -> None:
            await session.cancel()

        await step(Controls(llm, wait_text, cancel, lambda: bool(of(seen, TurnEnded))))
        if not of(seen, TurnEnded):
            seen += await collect(session, lambda e: isinstance(e.kind, TurnEnded))
        # Anything the session would still say about this turn is already queued: nothing may end it twice.
        await session.close()
        seen += [e async for e in session.events]
    ended = of(seen, TurnEnded)
    stop = ended[0].stop
    assert stop in (Completed(), Cancelled())
    return TurnSeen(text(), len(ended), "completed" if stop == Completed() else "cancelled")


async def _events(session: Any, seen: list[Any]) -> AsyncIterator[None]:
    async for event in session.events:
        seen.append(event)
        yield None


async def _play(face: str, tmp_path: Path, replies: list[Reply], step: Step, mp: pytest.MonkeyPatch) -> TurnSeen:
    async with FakeLLMServer(Scenario(replies)) as llm, asyncio.timeout(WAIT):
        if face == "acp":
            return await _through_acp(tmp_path, llm, step)
        return await _through_runtime(tmp_path, llm, step, mp)


@pytest.mark.parametrize("face", FACES)
async def test_the_turn_ends_once_after_the_last_report_turn_in_both_faces(
    face: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = await _play(face, tmp_path, _two_children(), _release_beta_after_alpha_reports, monkeypatch)
    assert seen == TurnSeen("Waiting for the other agent.Both agents reported.", ends=1, stop="completed")


@pytest.mark.parametrize("face", FACES)
async def test_a_cancel_while_a_child_works_ends_the_turn_once_cancelled_in_both_faces(
    face: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = await _play(face, tmp_path, _one_stuck_child(), _cancel_while_the_child_works, monkeypatch)
    assert seen == TurnSeen("", ends=1, stop="cancelled")

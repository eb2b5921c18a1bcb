"""What a page watching every session needs of the hub's sidecar wire, against a real hub process: `list` with
`after` answers once the list changed (a session opened, asking, idle again), each row carries the session's latest
usage, and a prompted turn's `TurnStarted` says what the prompt said, to every client, the late ones too."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from omniagent.testing import FakeLLMServer
from tests.hub.hub_process import WAIT, WireClient, running_hub
from tests.runtime.adapters.engine.harness import child_env, tool_then_text, workspace

ALLOW = {"Permission": "AllowOnce"}


async def _next_list(client: WireClient, version: int, done: Any) -> dict[str, Any]:
    """Lists with `after` until one satisfies `done` (each answer is a change past the version before)."""
    async with asyncio.timeout(WAIT):
        while True:
            listed: dict[str, Any] = await client.ok("list", after=version)
            assert listed["version"] > version
            if done(listed):
                return listed
            version = listed["version"]


async def test_a_waiting_list_answers_each_change_and_rows_carry_the_usage(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    with FakeLLMServer(tool_then_text()) as llm:
        async with (
            running_hub(tmp_path / "hub", env=child_env(tmp_path, llm)) as hub,
            WireClient.connect(hub) as watcher,
            WireClient.connect(hub) as worker,
        ):
            empty = await watcher.ok("list")
            assert empty["sessions"] == [] and isinstance(empty["version"], int)
            waiting = asyncio.ensure_future(watcher.ok("list", after=empty["version"]))
            # A command sent after it is answered (so the hub has read it), and it still waits: nothing changed.
            assert (await watcher.ok("list"))["version"] == empty["version"]
            assert not waiting.done()
            session = (await worker.ok("open", agent="omniagent", dir=str(ws)))["id"]
            opened = await waiting
            assert opened["version"] > empty["version"]
            assert [(row["id"], row["agent"], row["usage"]) for row in opened["sessions"]] == [
                (session, "omniagent", None)
            ]
            await worker.ok("prompt", session=session, text="write hello.txt")
            asking = await _next_list(
                watcher, opened["version"], lambda listed: listed["sessions"][0]["activity"] == "needs_input"
            )
            request = (await worker.event(session, "RequestOpened"))["kind"]["RequestOpened"]["Permission"]["id"]
            await worker.ok("answer", session=session, request=request, answer=ALLOW)
            idle = await _next_list(
                watcher,
                asking["version"],
                lambda listed: listed["sessions"][0]["activity"] == "idle" and listed["sessions"][0]["usage"],
            )
            usage = idle["sessions"][0]["usage"]
            assert usage["used_tokens"] > 0 and set(usage) == {"used_tokens", "window_tokens", "cost_usd"}
    assert (ws / "hello.txt").read_text() == "hello\n"


async def test_a_list_waiting_when_its_client_leaves_does_not_hold_the_hub(tmp_path: Path) -> None:
    async with running_hub(tmp_path / "hub", mock="turn") as hub:
        async with WireClient.connect(hub) as leaving:
            version = (await leaving.ok("list"))["version"]
            await leaving.send("list", after=version)
        async with WireClient.connect(hub) as other:
            session = (await other.ok("open", agent="mock", dir=str(tmp_path)))["id"]
            assert [row["id"] for row in (await other.ok("list"))["sessions"]] == [session]


async def test_a_prompted_turn_says_its_prompt_to_every_client_and_to_one_attaching_later(tmp_path: Path) -> None:
    async with running_hub(tmp_path / "hub", mock="chatter") as hub, WireClient.connect(hub) as owner:
        session = (await owner.ok("open", agent="mock", dir=str(tmp_path)))["id"]
        async with WireClient.connect(hub) as watcher:
            await watcher.ok("attach", session=session, role="observer")
            await owner.ok("prompt", session=session, text="say <b>three</b> things")
            for client in (owner, watcher):
                started = await client.event(session, "TurnStarted")
                assert started["kind"]["TurnStarted"]["origin"] == {"Prompt": "p1"}
                assert started["extensions"] == {"omniagent": {"prompt": "say <b>three</b> things"}}
            await owner.event(session, "TurnEnded")
        async with WireClient.connect(hub) as late:
            await late.ok("attach", session=session, role="observer", after=0)
            started = await late.event(session, "TurnStarted")
            assert started["extensions"]["omniagent"]["prompt"] == "say <b>three</b> things"

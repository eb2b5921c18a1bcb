"""Sessions that outlive their hub: a later hub over the same state folder resumes a session of an earlier one under
its id, through the agent's resume token (our engine against the fake LLM: the mock agent keeps no token); processes
sharing one folder never claim one id twice, nor hold one session at once."""

from __future__ import annotations

import asyncio
import json
import stat
import sys
from pathlib import Path

import pytest

from omniagent.hub.hub import Hub
from omniagent.hub.session import Attachment, ClientInfo
from omniagent.hub.state import HubState, IndexEntry
from omniagent.protocols.sidecar.events import Event, MessageEnded, TextDelta, TurnEnded, TurnStarted, UserMessage
from omniagent.runtime.errors import ResumeFailed, UnknownSession
from omniagent.runtime.runtime import Runtime
from omniagent.testing import FakeLLMServer, Reply, Scenario
from tests.runtime.adapters.engine.harness import WAIT, bodies, use_engine, workspace

TURN = Runtime.load_mock("turn")


async def _turn(attachment: Attachment) -> list[Event]:
    """The events up to the end of the turn running now (bounded)."""
    seen: list[Event] = []
    async with asyncio.timeout(WAIT):
        async for batch in attachment.batches():
            seen.extend(batch)
            if any(isinstance(event.kind, TurnEnded) for event in batch):
                return seen
    raise AssertionError("the session ended before its turn did")


async def test_a_session_of_an_earlier_hub_resumes_under_its_id_and_goes_on_with_its_conversation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = HubState(tmp_path / "hub")
    ws = workspace(tmp_path)
    async with FakeLLMServer(Scenario([Reply(text="first answer"), Reply(text="second answer")])) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with Hub.start(state=state) as first:
            opened = await first.client(ClientInfo("editor")).open("omniagent", ws)
            await opened.prompt("remember the word kumquat")
            await _turn(opened)
            session_id, token = opened.id, opened.info().resume_token
        [entry] = state.read_index()
        assert (entry.id, entry.resume_token, entry.ended) == (session_id, token, True) and token is not None

        async with Hub.start(state=state) as later:
            assert [past.id for past in later.past()] == [session_id]
            with pytest.raises(UnknownSession):
                await later.resume("s99")
            with pytest.raises(UnknownSession):
                await later.resume("../hub/token")
            client = later.client(ClientInfo("editor, the next day"))
            resumed = await client.resume(session_id)
            assert resumed.id == session_id and later.session(session_id) is resumed and later.past() == []
            assert resumed.created_at == entry.created_at and resumed.directory == entry.directory
            assert await client.resume(session_id) is resumed  # live now: the same session
            # The earlier conversation is the new log's start (the engine tells it): kept for every client at once.
            history = resumed.log.since(0).events
            assert [(e.sequence, e.turn_info, e.kind) for e in history] == [
                (1, None, UserMessage(message_id="m1", text="remember the word kumquat")),
                (2, None, TextDelta(message_id="m2", text="first answer")),
                (3, None, MessageEnded(message_id="m2")),
            ]
            attachment = client.attach(session_id)
            await attachment.prompt("which word?")
            events = await _turn(attachment)
            assert events[:3] == history and isinstance(events[3].kind, TurnStarted)
            [live] = state.read_index()
            assert not live.ended and live.resume_token == token
        second = (await bodies(llm, 2))[1]
    assert "".join(e.kind.text for e in events[3:] if isinstance(e.kind, TextDelta)) == "second answer"
    assert "kumquat" in str(second["messages"][0]) and "first answer" in str(second["messages"][1])
    [again] = state.read_index()
    assert again.ended and again.resume_token == token and again.title == entry.title


async def test_a_session_without_a_token_or_held_by_another_hub_is_not_resumed(tmp_path: Path) -> None:
    state = HubState(tmp_path / "hub")
    async with Hub.start(mock=TURN, state=state) as first:
        tokenless = await first.client(ClientInfo("a")).open("mock", tmp_path)
        await tokenless.close()
        # Another hub sharing the folder while the first holds a session: it lists it, and may not resume it.
        held = await first.client(ClientInfo("a")).open("mock", tmp_path)
        state.write_entry(IndexEntry(held.id, "mock", str(tmp_path), 0.0, resume_token="a-token"))
        async with Hub.start(mock=TURN, state=HubState(tmp_path / "hub")) as other:
            assert [entry.id for entry in other.past()] == [tokenless.id, held.id]
            with pytest.raises(ResumeFailed, match="no resume token"):
                await other.resume(tokenless.id)
            with pytest.raises(ResumeFailed, match="open in another process"):
                await other.resume(held.id)
            mine = await other.client(ClientInfo("b")).open("mock", tmp_path)
            assert mine.id not in (tokenless.id, held.id)


def test_the_index_reads_the_single_file_of_earlier_versions_and_numbers_after_it(tmp_path: Path) -> None:
    folder = tmp_path / "hub"
    folder.mkdir()
    rows = [{"id": "s4", "agent": "claude", "directory": "/w", "created_at": 1.0, "resume_token": "t4", "ended": True}]
    (folder / "sessions.json").write_text(json.dumps(rows), encoding="utf-8")
    state = HubState(folder)
    assert state.read_entry("s4") == IndexEntry("s4", "claude", "/w", 1.0, resume_token="t4", ended=True)
    assert state.claim() == "s5"
    assert [entry.id for entry in state.read_index()] == ["s4"]  # a claim is no entry until written


# A child claims ids once told to go (its "ready" first, so the children race from the same moment), then prints
# them; it exits without releasing (the kernel lets go of its locks).
_CLAIMER = """
import sys
from pathlib import Path
from omniagent.hub.state import HubState
state = HubState(Path(sys.argv[1]))
print("ready", flush=True)
sys.stdin.readline()
print(" ".join(state.claim() for _ in range(int(sys.argv[2]))), flush=True)
"""


async def test_processes_claiming_ids_in_one_folder_never_collide(tmp_path: Path) -> None:
    folder, each, processes = tmp_path / "hub", 60, 3
    children = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _CLAIMER,
            str(folder),
            str(each),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        for _ in range(processes)
    ]
    async with asyncio.timeout(WAIT * 2):
        for child in children:
            assert child.stdout is not None and await child.stdout.readline() == b"ready\n"
        for child in children:
            assert child.stdin is not None
            child.stdin.write(b"go\n")
            await child.stdin.drain()
        claimed = [(await child.communicate())[0].decode().split() for child in children]
    assert all(child.returncode == 0 for child in children)
    every = [session_id for ids in claimed for session_id in ids]
    assert sorted(every, key=lambda i: int(i[1:])) == [f"s{n}" for n in range(1, each * processes + 1)]
    for session_id in every:
        assert stat.S_IMODE((folder / "sessions" / f"{session_id}.json").stat().st_mode) == 0o600

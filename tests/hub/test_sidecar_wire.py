"""The sidecar wire over a hub's WebSocket (`/sidecar`), against a real hub process: the lines of `omniagent serve`
plus `attach`, `detach` and `list`; a session outlives the client that opened it (kill -9'd mid-turn), and the client
that reattaches with its cursor reads exactly what it missed, for the mock agent, our engine (fake LLM) and Claude
Code (native, offline against the fake LLM). Every line is checked against the anyagent schema."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from omniagent.testing import FakeLLMServer, Reply, Scenario
from tests.e2e.agents.harness import agent_world, tool_scenario
from tests.e2e.sidecar_client import Sidecar
from tests.hub.hub_process import ROOT, WAIT, RunningHub, WireClient, log_of, running_hub
from tests.pty_terminal import CTRL_D, Terminal
from tests.runtime.adapters.engine.harness import child_env, tool_then_text, workspace

FIRST_CLIENT = Path(__file__).resolve().parent / "first_client.py"
ALLOW = {"Permission": "AllowOnce"}


async def _kill_mid_turn_and_reattach(hub: RunningHub, agent: str, directory: Path, prompt: str) -> None:
    """The acceptance: client 1 (a process) opens and prompts; an observer follows from the start; client 1 is
    kill -9'd while the agent waits for a permission; client 2 attaches after client 1's last sequence, answers,
    and the turn finishes. Client 1's events then client 2's are the observer's: same sequences and kinds, in
    order, none twice."""
    env = os.environ | {"OMNIAGENT_HUB_TOKEN": hub.token, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    first = await asyncio.create_subprocess_exec(
        sys.executable, str(FIRST_CLIENT), hub.url, agent, str(directory), prompt,
        stdout=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    assert first.stdout is not None
    first_log: list[dict[str, Any]] = []
    try:
        async with asyncio.timeout(120):
            session = json.loads(await first.stdout.readline())["session"]
            async with WireClient.connect(hub) as observer:
                watched = await observer.ok("attach", session=session, role="observer", after=0)
                assert (watched["role"], watched["from"], watched["missed"]) == ("observer", 1, 0)
                while not first_log or first_log[-1]["kind"] != "RequestOpened":
                    line = await first.stdout.readline()
                    assert line, "client 1 ended before the agent asked"
                    first_log.append(json.loads(line))
                first.kill()  # SIGKILL: no goodbye on the socket
                await first.wait()
                first_log += [json.loads(line) for line in (await first.stdout.read()).splitlines()]
                request = next(entry["request"] for entry in first_log if entry["kind"] == "RequestOpened")
                last = first_log[-1]["sequence"]

                async with WireClient.connect(hub) as second:
                    attached = await second.ok("attach", session=session, after=last)
                    assert (attached["role"], attached["from"], attached["missed"]) == ("controller", last + 1, 0)
                    assert attached["info"]["id"] == session
                    assert await second.ok("answer", session=session, request=request, answer=ALLOW) is None
                    await second.event(session, "TurnEnded")
                    await observer.event(session, "TurnEnded")
                    assert await second.ok("close", session=session) is None
                    await second.until(lambda line: line.get("closed") == session)
                    await observer.until(lambda line: line.get("closed") == session)
                    second_log = log_of(second.events(session))
                observed = log_of(observer.events(session))
    finally:
        with contextlib.suppress(ProcessLookupError):
            first.kill()
        await first.wait()
    mine = [(entry["sequence"], entry["kind"]) for entry in first_log]
    assert mine + second_log == observed
    assert [sequence for sequence, _ in observed] == list(range(1, len(observed) + 1))
    assert "RequestClosed" in [kind for _, kind in second_log] and "TurnEnded" in [kind for _, kind in second_log]


async def test_a_session_outlives_its_killed_client_and_the_reattaching_client_reads_what_it_missed_mock(
    tmp_path: Path,
) -> None:
    async with running_hub(tmp_path / "hub", mock="turn") as hub:
        await _kill_mid_turn_and_reattach(hub, "mock", tmp_path, "run the tests")


async def test_the_same_with_our_engine_against_the_fake_llm(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    with FakeLLMServer(tool_then_text()) as llm:
        async with running_hub(tmp_path / "hub", env=child_env(tmp_path, llm)) as hub:
            await _kill_mid_turn_and_reattach(hub, "omniagent", ws, "write hello.txt")
    assert (ws / "hello.txt").read_text() == "hello\n"


@pytest.mark.timeout(300)
async def test_the_same_with_claude_code_native(tmp_path: Path) -> None:
    async with agent_world("claude", tmp_path, tool_scenario("claude")) as world:
        async with running_hub(tmp_path / "hub", env=os.environ | world.runtime_env) as hub:
            await _kill_mid_turn_and_reattach(hub, "claude", world.work, "run the tool")
        assert world.touched.exists()


async def test_a_cursor_beyond_the_retention_gets_what_is_kept_and_is_told_how_many_it_missed(tmp_path: Path) -> None:
    """Retention 8: after two 8-event turns (each read before the next prompt, so the first client never falls
    behind), attaching from the start (or after 2) replays events 9-16 and says `missed` 8 (or 6); a cursor still
    kept misses nothing; `history: none` replays nothing and starts after the last."""
    async with running_hub(tmp_path / "hub", mock="chatter", retention=8) as hub, WireClient.connect(hub) as first:
        session = (await first.ok("open", agent="mock", dir=str(tmp_path)))["id"]
        for turn in (1, 2):
            await first.ok("prompt", session=session, text="go")
            await first.until(lambda line, last=8 * turn: line.get("event", {}).get("sequence") == last)
        assert [event["sequence"] for event in first.events(session)] == list(range(1, 17))
        assert first.events(session)[-1]["kind"] == {"StatusChanged": "Idle"}
        for after, missed in ((None, 8), (2, 6), (12, 0)):
            async with WireClient.connect(hub) as late:
                fields = {"after": after} if after is not None else {}
                attached = await late.ok("attach", session=session, role="observer", **fields)
                start = max(9, (after or 0) + 1)
                assert (attached["from"], attached["missed"]) == (start, missed)
                await late.until(lambda line: line.get("event", {}).get("sequence") == 16)
                assert [event["sequence"] for event in late.events(session)] == list(range(start, 17))
        async with WireClient.connect(hub) as live:
            attached = await live.ok("attach", session=session, history="none")
            assert (attached["from"], attached["missed"]) == (17, 0)
            await live.ok("prompt", session=session, text="again")
            started = await live.event(session, "TurnStarted")
            assert started["sequence"] == 17 and live.events(session)[0] is started


async def test_the_wire_attach_detach_list_and_its_refusals(tmp_path: Path) -> None:
    async with running_hub(tmp_path / "hub", mock="turn") as hub:
        async with WireClient.connect(hub) as owner, WireClient.connect(hub) as other:
            assert set(owner.lines[0]) == {"hello"} and owner.lines[0]["hello"]["protocol"] == 1
            session = (await owner.ok("open", agent="mock", dir=str(tmp_path)))["id"]
            await owner.socket.send("not json")
            await owner.socket.send(b'{"id":1,"cmd":"list"}')
            refused = [line for line in await _lines_until(owner, 2, lambda line: line.get("id", 0) is None)]
            assert [line["error"]["kind"] for line in refused] == ["BadFrame", "BadFrame"]
            assert any("text frame" in line["error"]["message"] for line in refused)
            assert any("invalid JSON" in line["error"]["message"] for line in refused)
            assert (await other.error("attach", session="s99"))["kind"] == "UnknownSession"
            assert (await other.error("prompt", session=session, text="hi"))["kind"] == "UnknownSession"
            await other.ok("attach", session=session, role="observer")
            again = await other.error("attach", session=session)
            assert again["kind"] == "InvalidRequest" and "detach first" in again["message"]
            refusal = await other.error("prompt", session=session, text="hi")
            assert refusal["kind"] == "InvalidRequest" and "observer" in refusal["message"]

            listed = (await owner.ok("list"))["sessions"]
            assert [(row["id"], row["agent"], row["activity"], row["past"]) for row in listed] == [
                (session, "mock", "idle", False)
            ]
            assert sorted(client["role"] for client in listed[0]["clients"]) == ["controller", "observer"]

            # Detaching: `closed` comes before the reply; the session goes on for the others.
            detach = await other.send("detach", session=session)
            lines = await _lines_until(other, 2, lambda line: line.get("id") == detach or "closed" in line)
            assert lines == [{"closed": session}, {"id": detach, "ok": None}]
            await owner.ok("prompt", session=session, text="go")
            await owner.event(session, "RequestOpened")
            listed = (await owner.ok("list"))["sessions"]
            assert listed[0]["activity"] == "needs_input" and len(listed[0]["clients"]) == 1
            assert [event for event in other.events(session) if event["sequence"] > 0] == other.events(session)
            assert not any("event" in line for line in other.lines[other.lines.index({"closed": session}) :])
        # Both sockets closed: the session is still there, nobody attached.
        async with WireClient.connect(hub) as third:
            listed = (await third.ok("list"))["sessions"]
            assert listed[0]["clients"] == [] and listed[0]["activity"] == "needs_input"
        with pytest.raises(InvalidStatus):
            async with connect(hub.url.replace("http", "ws") + "/sidecar", additional_headers={}):
                pass
    # A new run of the hub on the same folder lists the earlier run's session as past.
    async with running_hub(tmp_path / "hub", mock="turn") as hub, WireClient.connect(hub) as client:
        listed = (await client.ok("list"))["sessions"]
        assert [(row["id"], row["activity"], row["past"], row["last_sequence"]) for row in listed] == [
            (session, "ended", True, None)
        ]


async def _lines_until(client: WireClient, count: int, match: Any) -> list[dict[str, Any]]:
    """The first `count` lines matching `match`, in order (bounded wait)."""
    await client.until(lambda _: sum(1 for line in client.lines if match(line)) >= count)
    return [line for line in client.lines if match(line)][:count]


async def test_serve_refuses_the_hub_commands_with_a_clear_error() -> None:
    async with Sidecar.running(mock="turn") as sidecar:
        for cmd, fields in (("attach", {"session": "s1"}), ("detach", {"session": "s1"}), ("list", {})):
            error = await sidecar.error(cmd, **fields)
            expected = "UnknownSession" if cmd == "detach" else "InvalidRequest"
            assert error["kind"] == expected, error
            if expected == "InvalidRequest":
                assert "hub" in error["message"]


def test_chat_attach_then_ctrl_d_detaches_and_the_session_goes_on(tmp_path: Path) -> None:
    """`chat --attach URL --agent mock` opens a session in the hub and chats; Ctrl-D leaves with exit 0 and the
    session is still in the hub, unattached; `sessions --hub` lists it; `chat --attach URL/ID` replays it."""
    asyncio.run(_chat_attach(tmp_path))


async def _chat_attach(tmp_path: Path) -> None:
    async with running_hub(tmp_path / "hub", mock="chatter") as hub:
        env = os.environ | {"OMNIAGENT_HUB_TOKEN": hub.token, "OMNIAGENT_STATE_DIR": str(tmp_path / "state")}
        env["PYTHONPATH"] = f"{ROOT / 'src'}{os.pathsep}{ROOT}"
        await asyncio.to_thread(_chat_and_detach, hub.url, tmp_path, env)
        async with WireClient.connect(hub) as client:
            (row,) = (await client.ok("list"))["sessions"]
            assert (row["agent"], row["activity"], row["clients"], row["directory"]) == (
                "mock",
                "idle",
                [],
                str(tmp_path),
            )
        # No token given: the one in the hub's folder of the data dir, as on the hub's own machine.
        local = {k: v for k, v in env.items() if k != "OMNIAGENT_HUB_TOKEN"} | {"OMNIAGENT_DATA_DIR": str(tmp_path)}
        listing = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "omniagent", "sessions", "--hub", hub.url],
            env=local, capture_output=True, text=True, timeout=WAIT,
        )  # fmt: skip
        assert listing.returncode == 0, listing.stderr
        header, entry = listing.stdout.splitlines()[:2]
        assert header.split() == ["id", "agent", "activity", "clients", "title", "directory"]
        assert entry.split()[:4] == [row["id"], "mock", "idle", "-"]
        as_json = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "omniagent", "sessions", "--hub", hub.url, "--json"],
            env=env, capture_output=True, text=True, timeout=WAIT,
        )  # fmt: skip
        assert [r["id"] for r in json.loads(as_json.stdout)] == [row["id"]]
        await asyncio.to_thread(_reattach, f"{hub.url}/{row['id']}", tmp_path, env)
        refused = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "omniagent", "sessions", "--hub", hub.url, "--token", "wrong"],
            env=env, capture_output=True, text=True, timeout=WAIT,
        )  # fmt: skip
        assert refused.returncode == 1 and "token was refused" in refused.stderr
        assert "wrong" not in refused.stderr and hub.token not in refused.stderr + refused.stdout


def _chat_and_detach(url: str, cwd: Path, env: dict[str, str]) -> None:
    with Terminal("chat", "--attach", url, "--agent", "mock", cwd=cwd, env=env) as chat:
        chat.expect("mock>")
        chat.line("hello")
        chat.expect("three")
        chat.expect("mock>")
        chat.type(CTRL_D)
        chat.expect("detached; the session goes on in the hub")
        assert chat.wait() == 0


def _reattach(url: str, cwd: Path, env: dict[str, str]) -> None:
    with Terminal("chat", "--attach", url, cwd=cwd, env=env) as chat:
        chat.expect("three")  # the first turn, replayed
        chat.expect("mock>")
        chat.type(CTRL_D)
        assert chat.wait() == 0


async def test_a_reader_the_retention_left_behind_is_let_go_instead_of_given_a_gap(tmp_path: Path) -> None:
    """The hub's host of the wire: a connection whose reader is behind what the hub still keeps stops following the
    session (its forwarder then writes `closed`, no error) rather than skip events; the session goes on, and
    attaching again says how many were missed. The reader here reads only once the turn is over: behind for sure."""
    from omniagent.hub.hub import Hub
    from omniagent.hub.session import ClientInfo
    from omniagent.protocols.sidecar.commands import Attach
    from omniagent.runtime.runtime import Runtime
    from omniagent.serving.sidecar.hub_host import HubHost

    async with Hub.start(mock=Runtime.load_mock("chatter"), retention=4) as hub:
        owner = await hub.client(ClientInfo("owner")).open("mock", tmp_path)
        host = HubHost(hub.client(ClientInfo("slow")))
        slow, attached = await host.attach(Attach(id=1, session=owner.id, after=0))
        assert (attached.from_, attached.missed) == (1, 0)
        await owner.prompt("go")
        log = hub.session(owner.id).log
        async with asyncio.timeout(WAIT):
            while log.last < 8:
                await log.pending().wait()
        assert [batch async for batch in host.follow(slow)] == []
        assert [client.client.name for client in hub.session(owner.id).clients] == ["owner"]
        _, again = await host.attach(Attach(id=2, session=owner.id, after=0))
        assert (again.from_, again.missed) == (5, 4)
        assert not hub.session(owner.id).closed


def test_chat_attach_to_a_session_waiting_for_an_answer_asks_it_and_the_opener_sees_the_turn_end(
    tmp_path: Path,
) -> None:
    """A session opened and prompted by a wire client waits for a permission; `chat --attach URL/ID` replays the
    request and asks it; the answer typed there ends the turn, which the opener sees too."""
    asyncio.run(_chat_answers(tmp_path))


async def _chat_answers(tmp_path: Path) -> None:
    async with running_hub(tmp_path / "hub", mock="turn") as hub, WireClient.connect(hub) as opener:
        session = (await opener.ok("open", agent="mock", dir=str(tmp_path)))["id"]
        await opener.ok("prompt", session=session, text="run the tests")
        await opener.event(session, "RequestOpened")
        env = os.environ | {"OMNIAGENT_HUB_TOKEN": hub.token, "OMNIAGENT_STATE_DIR": str(tmp_path / "state")}
        env["PYTHONPATH"] = f"{ROOT / 'src'}{os.pathsep}{ROOT}"
        await asyncio.to_thread(_answer_in_chat, f"{hub.url}/{session}", tmp_path, env)
        ended = await opener.event(session, "TurnEnded")
        assert ended["kind"]["TurnEnded"]["stop"] == {"Completed": {"source": "Protocol"}}
        assert "Done." in [e["kind"]["TextDelta"]["text"] for e in opener.events(session) if "TextDelta" in e["kind"]]


def _answer_in_chat(url: str, cwd: Path, env: dict[str, str]) -> None:
    with Terminal("chat", "--attach", url, cwd=cwd, env=env) as chat:
        chat.expect("cargo test")
        chat.expect("choice")
        chat.line("y")
        chat.expect("Done.")
        chat.expect("mock>")
        chat.type(CTRL_D)
        chat.expect("detached")
        assert chat.wait() == 0


async def test_attach_resumes_a_session_of_an_earlier_hub_run(tmp_path: Path) -> None:
    """The hub stops; a later hub over the same data dir lists the session as past, and the sidecar's `attach`
    opens it again by its agent's resume token under its id: its history (full, the default) replays the earlier
    conversation, told by the engine outside any turn, and the conversation goes on (our engine, fake LLM)."""
    ws = workspace(tmp_path)
    with FakeLLMServer(Scenario([Reply(text="first answer"), Reply(text="second answer")])) as llm:
        env = child_env(tmp_path, llm)
        async with running_hub(tmp_path / "hub", env=env) as hub, WireClient.connect(hub) as client:
            session = (await client.ok("open", agent="omniagent", dir=str(ws)))["id"]
            await client.ok("prompt", session=session, text="remember the word kumquat")
            await client.until(lambda line: "TurnEnded" in str(line.get("event", {}).get("kind")))
        async with running_hub(tmp_path / "hub", env=env) as hub, WireClient.connect(hub) as client:
            [past] = [row for row in (await client.ok("list"))["sessions"] if row["id"] == session]
            assert past["past"] is True
            attached = await client.ok("attach", session=session)
            assert attached["info"]["id"] == session
            await client.event(session, "MessageEnded")
            told = [(e["sequence"], e.get("turn_info"), e["kind"]) for e in client.events(session)][:3]
            assert told == [
                (1, None, {"UserMessage": {"message_id": "m1", "text": "remember the word kumquat"}}),
                (2, None, {"TextDelta": {"message_id": "m2", "text": "first answer"}}),
                (3, None, {"MessageEnded": {"message_id": "m2"}}),
            ]
            await client.ok("prompt", session=session, text="which word?")
            ended = await client.until(lambda line: "TurnEnded" in str(line.get("event", {}).get("kind")))
            assert ended["event"]["session_id"] == session
        second = llm.requests[-1].body
    assert "kumquat" in json.dumps(second)  # the resumed conversation reached the model

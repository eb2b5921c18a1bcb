"""Sessions through a real `omniagent serve --mock` subprocess (docs/sidecar.md).

Every line is schema-checked and held to G1-G4 by the client (`tests/e2e/sidecar_client.py`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from omniagent._version import __version__
from tests.e2e.sidecar_client import Sidecar, kind_of, statuses, texts

FAKE_ACP_AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "acp_agents" / "fake_agent.py"


async def test_hello_is_the_first_line_and_discover_lists_the_mock_agent_under_the_callers_id() -> None:
    """The hello is always first (protocol 1, crate version); `discover` echoes the id (e.g. 7)."""
    async with Sidecar.running(mock="turn") as sidecar:
        await sidecar.send_raw(b'{"id":7,"cmd":"discover"}\n')
        reply = await sidecar.reply(7)
        assert sidecar.lines[0] == {"hello": {"protocol": 1, "anyagent": __version__}}
        assert reply == {
            "id": 7,
            "ok": {
                "agents": [{"id": "mock", "name": "Mock", "executable_path": "mock", "source": "Pinned"}],
                "missing": [],
                "diagnostics": [],
            },
        }


async def test_a_permission_turn_round_trips_and_status_goes_working_needs_input_working_idle() -> None:
    """A permission round trip; the turn's statuses are `Working, NeedsInput, Working, Idle`."""
    async with Sidecar.running(mock="turn") as sidecar:
        session = await sidecar.open()
        assert session == "s1"
        delivery = await sidecar.ok("prompt", session=session, text="run the tests")
        assert delivery == {"prompt_id": "p1", "kind": {"Started": {"turn_id": "t1"}}}
        opened = await sidecar.wait_event(session, "RequestOpened")
        assert opened["session_id"] == session
        assert opened["turn_info"] == {"id": "t1", "parent_tool_id": None}
        assert opened["kind"]["RequestOpened"]["Permission"]["id"] == "r1"
        answered_at = len(sidecar.lines)
        answer = {"Permission": "AllowOnce"}
        assert await sidecar.ok("answer", session=session, request="r1", answer=answer) is None
        ended = await sidecar.wait_event(session, "TurnEnded")
        assert ended["kind"]["TurnEnded"] == {"stop": {"Completed": {"source": "Protocol"}}, "background": []}
        assert await sidecar.ok("close", session=session) is None
        assert await sidecar.wait_closed(session) == {"closed": "s1"}

        events = sidecar.events(session)
        assert texts([line["event"] for line in sidecar.lines[answered_at:] if "event" in line]) == ["Done."]
        assert texts(events) == ["Let me check. ", "Done."]
        started = next(e for e in events if kind_of(e) == "TurnStarted")
        assert started["kind"]["TurnStarted"] == {"origin": {"Prompt": "p1"}}
        assert statuses(events) == ["Working", "NeedsInput", "Working", "Idle"]
        order = [kind_of(e) for e in events if kind_of(e) in ("RequestClosed", "MessageEnded", "TurnEnded")]
        assert order == ["RequestClosed", "MessageEnded", "TurnEnded"]


async def test_two_interleaved_sessions_each_see_only_their_own_events_in_gap_free_sequence() -> None:
    """G2: sequences from 1, strictly increasing, no gaps, per session."""
    async with Sidecar.running(mock="chatter") as sidecar:
        first, second = await sidecar.open(), await sidecar.open()
        for _ in range(2):  # chatter has two turns; both sessions run each turn at the same time
            start = len(sidecar.lines)
            for session in (first, second):
                await sidecar.send("prompt", session=session, text="talk")
            for session in (first, second):
                await sidecar.wait_event(session, "TurnEnded", start=start)
        for session in (first, second):
            events = sidecar.events(session)
            assert {e["session_id"] for e in events} == {session}
            assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
            assert texts(events) == ["one", "two", "three"] * 2
            assert [e["kind"]["MessageEnded"]["message_id"] for e in events if kind_of(e) == "MessageEnded"] == [
                "m1",
                "m2",
            ]
            assert [e["turn_info"]["id"] for e in events if kind_of(e) == "TurnEnded"] == ["t1", "t2"]


async def test_the_twenty_thousand_delta_flood_arrives_whole_and_in_order() -> None:
    """A paced flood of 20,000 deltas is delivered whole: nothing is lost."""
    async with Sidecar.running(mock="flood") as sidecar:
        session = await sidecar.open()
        await sidecar.send("prompt", session=session, text="flood")
        ended = await sidecar.wait_event(session, "TurnEnded")
        assert ended["kind"]["TurnEnded"]["stop"] == {"Completed": {"source": "Protocol"}}
        events = sidecar.events(session)
        assert texts(events) == ["x"] * 20_000
        assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))


async def test_an_agent_death_ends_the_turn_failed_then_sends_process_exited_then_closed() -> None:
    """G3, the crash path: MessageEnded → TurnEnded Failed → ProcessExited{status "9"} → closed."""
    async with Sidecar.running(mock="die") as sidecar:
        session = await sidecar.open()
        await sidecar.send("prompt", session=session, text="hi")
        await sidecar.wait_closed(session)
        mine = [line for line in sidecar.lines if _belongs_to(line, session)]
        error_at = next(i for i, line in enumerate(mine) if "error" in line)
        assert mine[error_at] == {
            "session": session,
            "error": {
                "kind": "ProcessExited",
                "message": "agent process exited (9): mock died",
                "status": "9",
                "stderr": "mock died",
            },
        }
        before = [kind_of(line["event"]) for line in mine[:error_at]]
        ended_at = before.index("TurnEnded")
        assert before[ended_at - 1] == "MessageEnded"
        assert set(before[ended_at + 1 :]) <= {"StatusChanged"}  # only bookkeeping between the end and the error
        ended = mine[ended_at]["event"]["kind"]["TurnEnded"]
        assert ended["stop"] == {"Failed": {"message": "agent exited during the turn (9): mock died"}}
        assert all("event" in line for line in mine[error_at + 1 : -1])
        assert mine[-1] == {"closed": session}
        assert (await sidecar.error("prompt", session=session, text="again"))["kind"] == "SessionClosed"


async def test_an_acp_agent_dying_mid_turn_is_reported_with_its_exit_status_and_stderr_tail(tmp_path: Path) -> None:
    """Issue 26: a real agent process (the ACP fake, inline) writes to stderr and exits 3 mid-turn: TurnEnded
    Failed and the ProcessExited error both carry "exit status: 3" and its last stderr lines, at most 2,000
    characters of them, with the value of a secret variable of its environment redacted."""
    key = "fake-agent-key-0123456789abcdef"
    async with Sidecar.running(env={**os.environ, "FAKE_AGENT_KEY": key}) as sidecar:
        fake = {"name": "fake-acp", "path": sys.executable, "args": [str(FAKE_ACP_AGENT), "--max-version", "1"]}
        agent = {"acp": fake}
        session = (await sidecar.ok("open", agent=agent, dir=str(tmp_path)))["id"]
        await sidecar.send("prompt", session=session, text="crash")
        await sidecar.wait_closed(session)
        mine = [line for line in sidecar.lines if _belongs_to(line, session)]
    [error] = [line["error"] for line in mine if "error" in line]
    assert error["kind"] == "ProcessExited" and error["status"] == "exit status: 3", error
    assert error["stderr"].startswith("…") and len(error["stderr"]) == 2000, error
    tail = "x\nfake agent: retrying with key [redacted]\nfake agent: out of memory, giving up"
    assert error["stderr"].endswith(tail), error
    assert error["message"] == f"agent process exited (exit status: 3): {error['stderr']}"
    events = [line["event"] for line in mine if "event" in line]
    [ended] = [event["kind"]["TurnEnded"] for event in events if kind_of(event) == "TurnEnded"]
    failed = f"agent exited during the turn (exit status: 3): {error['stderr']}"
    assert ended["stop"] == {"Failed": {"message": failed}}
    assert key not in str(sidecar.lines)


async def test_an_event_with_text_that_has_no_utf8_form_is_still_delivered_in_sequence() -> None:
    """G2 and our rule "bad input loses nothing": a lone surrogate (a path with undecodable bytes) is
    written as `?`, the turn goes on, no event is skipped and the session is not closed."""
    async with Sidecar.running(mock="surrogate.json") as sidecar:
        session = await sidecar.open()
        await sidecar.send("prompt", session=session, text="list files")
        await sidecar.wait_event(session, "TurnEnded")
        assert texts(sidecar.events(session)) == ["before ", "bad?.txt", " after"]
        assert (await sidecar.ok("info", session=session))["status"] == "Idle"


async def test_configure_sends_option_and_is_confirmed_by_session_updated() -> None:
    """`configure` (field `option`) → SessionUpdated; the configure script: opus in configuration and config_options."""
    async with Sidecar.running(mock="configure") as sidecar:
        session = await sidecar.open()
        unknown = await sidecar.error("configure", session=session, option="effort", value="high")
        assert unknown["kind"] == "InvalidConfiguration"
        assert "effort" in unknown["detail"]
        not_a_choice = await sidecar.error("configure", session=session, option="model", value="gpt")
        assert not_a_choice["kind"] == "InvalidConfiguration"
        misnamed = await sidecar.error("configure", session=session, id_="x", value="opus")
        assert misnamed["kind"] == "BadFrame"
        start = len(sidecar.lines)
        assert await sidecar.ok("configure", session=session, option="model", value="opus") is None
        updated = (await sidecar.wait_event(session, "SessionUpdated", start=start))["kind"]["SessionUpdated"]
        assert updated["configuration"]["options"]["model"] == "opus"
        assert updated["details"]["config_options"][0]["current"] == "opus"
        assert (await sidecar.ok("info", session=session))["configuration"]["options"] == {"model": "opus"}


async def test_generate_returns_the_turns_text_as_a_bare_string_and_refuses_resume() -> None:
    """`generate` answers a JSON string; resume or fork → InvalidConfiguration."""
    async with Sidecar.running(mock="generate.json") as sidecar:
        text = await sidecar.ok("generate", agent="mock", dir=".", prompt="a title for this")
        assert text == "Fix the flaky test"
        refused = await sidecar.error("generate", agent="mock", dir=".", prompt="x", resume="token")
        assert refused["kind"] == "InvalidConfiguration"
        assert refused["message"].startswith("invalid configuration: ")


async def test_unknown_session_names_the_session_and_a_closed_session_refuses_all_but_info() -> None:
    """Closed sessions are kept: commands answer SessionClosed, `info` answers with status Idle."""
    async with Sidecar.running(mock="turn") as sidecar:
        ghost = await sidecar.error("prompt", session="ghost", text="boo")
        assert ghost == {"kind": "UnknownSession", "message": "no session ghost", "session": "ghost"}
        session = await sidecar.open()
        await sidecar.send("prompt", session=session, text="go")
        await sidecar.wait_event(session, "RequestOpened")
        assert await sidecar.ok("close", session=session) is None
        await sidecar.wait_closed(session)
        closed = await sidecar.error("prompt", session=session, text="again")
        assert closed == {"kind": "SessionClosed", "message": "session is closed"}
        answer = {"Permission": "AllowOnce"}
        assert (await sidecar.error("answer", session=session, request="r1", answer=answer))["kind"] == "SessionClosed"
        info = await sidecar.ok("info", session=session)
        assert (info["id"], info["status"]) == (session, "Idle")
        stops = [e["kind"]["TurnEnded"]["stop"] for e in sidecar.events(session) if kind_of(e) == "TurnEnded"]
        assert stops == ["Cancelled"]  # a bare string


async def test_the_throwaway_sessions_of_probe_and_generate_are_unknown_to_the_app() -> None:
    """`UnknownSession` for an id never opened *on this wire*; probe's and generate's sessions take
    ids from the same counter (so the app's first session is not s1) but are never the app's."""
    async with Sidecar.running(mock="generate.json") as sidecar:
        await sidecar.ok("probe", agent="mock")
        assert await sidecar.ok("generate", agent="mock", dir=".", prompt="title") == "Fix the flaky test"
        for throwaway in ("s1", "s2"):
            assert (await sidecar.error("info", session=throwaway))["kind"] == "UnknownSession"
        session = await sidecar.open()
        assert session == "s3"
        assert (await sidecar.ok("info", session=session))["id"] == session


def _belongs_to(line: dict[str, object], session: str) -> bool:
    event = line.get("event")
    if isinstance(event, dict):
        return bool(event["session_id"] == session)
    return line.get("session") == session or line.get("closed") == session

"""opencode through its own HTTP face (`opencode serve`, catalog row `opencode`), driven through `omniagent serve`
in a loopback-only network namespace against the fake LLM (harness.py). Issue 8 part 4 and its acceptance: a turn
streams text, a permission is allowed once and denied once, cancel mid-turn, resume in a new process with the
earlier turn remembered, rollback, fork and compact. Every sidecar line is validated against the wire schema and
the ordering rules (`Sidecar`).

The runtime reaches opencode's server on 127.0.0.1, so it must run inside the namespace too: the sidecar is started
through the namespace's nsenter, and the launcher it spawns does not enter again. The adapter's own
OPENCODE_CONFIG_CONTENT (the permission rules of the session's mode) and server password reach opencode through
the launcher; the fake provider comes from opencode's global config file (peers.py).
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agents.harness import STEP, World, agent_world, plain_scenario, slow_scenario
from tests.e2e.agents.peers import _DESCRIBED, TEXT
from tests.e2e.sidecar_client import Line, Sidecar, kind_of, texts

AGENT = "opencode"
pytestmark = pytest.mark.timeout(300)


@asynccontextmanager
async def world_of(root: Path, scenario: dict[str, Any]) -> AsyncIterator[World]:
    async with agent_world(AGENT, root, scenario, launcher_enters=False) as world:
        yield world


@asynccontextmanager
async def sidecar_in(world: World, **env: str) -> AsyncIterator[Sidecar]:
    """An `omniagent serve` inside the world's namespace (a new process, so a new opencode serve per session), with
    `env` added to its environment."""
    async with Sidecar.running(env=world.runtime_env | env, prefix=world.enter, wait=STEP) as sidecar:
        yield sidecar


async def open_session(sidecar: Sidecar, world: World, **fields: Any) -> Line:
    """Open an opencode session in the world's work dir; its SessionInfo."""
    info: Line = await sidecar.ok("open", agent=AGENT, dir=str(world.work), **fields)
    return info


async def until(sidecar: Sidecar, session: str, kind: str, start: int) -> list[Line]:
    """The session's events from line `start` up to and including the first `kind` one."""
    await sidecar.wait_event(session, kind, start=start)
    events = [line["event"] for line in sidecar.lines[start:] if "event" in line]
    mine = [e for e in events if e["session_id"] == session]
    return mine[: next(i for i, e in enumerate(mine) if kind_of(e) == kind) + 1]


async def prompt(sidecar: Sidecar, session: str, text: str, until_kind: str = "TurnEnded") -> list[Line]:
    mark = len(sidecar.lines)
    await sidecar.ok("prompt", session=session, text=text)
    return await until(sidecar, session, until_kind, mark)


async def turn(sidecar: Sidecar, session: str, text: str) -> list[Line]:
    """Prompt and collect the whole turn; it must complete."""
    events = await prompt(sidecar, session, text)
    assert stop_of(events) == "Completed", events[-1]
    return events


def stop_of(events: list[Line]) -> str:
    """The TurnEnded stop's tag (the last event)."""
    stop = events[-1]["kind"]["TurnEnded"]["stop"]
    return stop if isinstance(stop, str) else next(iter(stop))


def tools(events: list[Line]) -> list[Line]:
    return [e["kind"]["ToolUpdated"] for e in events if kind_of(e) == "ToolUpdated"]


def server_password(world: World) -> str:
    """The password the adapter gave the running opencode serve (read from its environment, as root can)."""
    environ = Path(f"/proc/{world.agent_pid()}/environ").read_bytes().split(b"\0")
    [value] = [item.partition(b"=")[2] for item in environ if item.startswith(b"OPENCODE_SERVER_PASSWORD=")]
    return value.decode()


def bodies_with(world: World, marker: str) -> list[str]:
    """The fake LLM request bodies (as JSON text) that carry `marker`."""
    return [text for text in (json.dumps(r.get("body")) for r in world.requests()) if marker in text]


def tool_call(command: str, match: str) -> dict[str, Any]:
    arguments = _DESCRIBED | {"command": command}
    return {"kind": "reply", "tool_calls": [{"name": "bash", "arguments": arguments}], "match": match}


async def test_a_turn_streams_text_and_permissions_are_allowed_once_then_denied_once(tmp_path: Path) -> None:
    """Acceptance: open → prompt → streamed deltas → a permission allowed once (the command runs, its tool update
    carries the output) and one denied once (it does not run) → TurnEnded. This is opencode's HTTP face: resume,
    fork, rollback and compact are advertised, unlike its ACP face."""
    # The first main call (the first request offering tools) asks for `touch a.txt`; the second prompt's main
    # call asks for `touch b.txt`; every other call (the title, answers after a tool) is plain text.
    scenario = {
        "steps": [tool_call("touch a.txt", '"bash"'), tool_call("touch b.txt", "create file B")],
        "fallback": {"kind": "reply", "text": "tool done"},
    }
    async with world_of(tmp_path, scenario) as world, sidecar_in(world) as sidecar:
        info = await open_session(sidecar, world)
        session = info["id"]
        features = set(info["details"]["capabilities"]["features"])
        assert {"Resume", "Fork", "Rollback", "Compact", "Permissions", "Questions"} <= features
        assert "Steer" not in features
        assert info["details"]["version"] == "1.18.33"
        assert info["resume_token"].startswith("ses_")
        password = server_password(world)
        assert len(password) >= 32

        asked = await prompt(sidecar, session, "create file A", until_kind="RequestOpened")
        request = asked[-1]["kind"]["RequestOpened"]["Permission"]
        assert request["options"] == ["AllowOnce", "AllowAlways", "DenyOnce"]
        assert request["tool"]["title"] == "touch a.txt"
        assert request["tool"]["input"] == {"Command": {"command": "touch a.txt", "cwd": str(world.work)}}
        mark = len(sidecar.lines)
        await sidecar.ok("answer", session=session, request=request["id"], answer={"Permission": "AllowOnce"})
        rest = await until(sidecar, session, "TurnEnded", mark)
        assert stop_of(rest) == "Completed"
        assert "".join(texts(rest)) == "tool done"
        done = [t for t in tools(rest) if t["status"] == "Completed"]
        assert done and done[-1]["output"] is not None
        assert (world.work / "a.txt").exists()

        asked = await prompt(sidecar, session, "create file B", until_kind="RequestOpened")
        request = asked[-1]["kind"]["RequestOpened"]["Permission"]
        mark = len(sidecar.lines)
        await sidecar.ok("answer", session=session, request=request["id"], answer={"Permission": "DenyOnce"})
        rest = await until(sidecar, session, "TurnEnded", mark)
        assert not (world.work / "b.txt").exists()
        # As over ACP, opencode ends the turn at once, asking the model nothing more.
        assert stop_of(rest) == "Completed" and texts(rest) == []
        assert [t for t in tools(rest) if t["status"] == "Failed"], "the denied command's tool must end Failed"
        await sidecar.ok("close", session=session)
        await sidecar.wait_closed(session)
    # The server's password is a secret: on no wire line and in no log line.
    assert password not in json.dumps(sidecar.lines) and password.encode() not in sidecar.stderr


async def test_cancel_mid_turn_ends_cancelled_and_the_next_prompt_completes(tmp_path: Path) -> None:
    """Acceptance: cancel while the model streams → `TurnEnded Cancelled` (opencode's abort); the session then
    runs a normal turn."""
    async with world_of(tmp_path, slow_scenario(AGENT)) as world, sidecar_in(world) as sidecar:
        session = (await open_session(sidecar, world))["id"]
        mark = len(sidecar.lines)
        await sidecar.ok("prompt", session=session, text="say something slowly")
        await sidecar.wait_event(session, "TextDelta", start=mark)
        await sidecar.ok("cancel", session=session)
        events = await until(sidecar, session, "TurnEnded", mark)
        assert stop_of(events) == "Cancelled"
        events = await turn(sidecar, session, "say hello")
        assert TEXT in "".join(texts(events))


async def test_a_reply_cut_at_the_models_output_limit_completes_the_turn_at_that_limit(tmp_path: Path) -> None:
    """Issue 33: the model's reply stops at its length limit; opencode marks the assistant message with its
    `MessageOutputLengthError` (which its own ACP face says as `max_tokens`): `Completed` at limit MaxTokens."""
    step = {"kind": "reply", "text": "cut short", "stop": "length", "match": '"bash"'}
    scenario = {"steps": [step], "fallback": {"kind": "reply", "text": "title"}}
    async with world_of(tmp_path, scenario) as world, sidecar_in(world) as sidecar:
        session = (await open_session(sidecar, world))["id"]
        events = await prompt(sidecar, session, "say something long")
        assert events[-1]["kind"]["TurnEnded"]["stop"] == {"Completed": {"source": "Protocol", "limit": "MaxTokens"}}


async def test_killing_the_server_fails_the_turn_and_ends_the_session_with_process_exited(tmp_path: Path) -> None:
    """SIGKILL to opencode's server mid-turn: `TurnEnded Failed`, then the session's error line `ProcessExited`
    (status = the signal), then `closed`."""
    async with world_of(tmp_path, slow_scenario(AGENT)) as world, sidecar_in(world) as sidecar:
        session = (await open_session(sidecar, world))["id"]
        mark = len(sidecar.lines)
        await sidecar.ok("prompt", session=session, text="say something slowly")
        await sidecar.wait_event(session, "TextDelta", start=mark)
        os.killpg(world.agent_pid(), signal.SIGKILL)  # the runtime starts the server in its own group
        events = await until(sidecar, session, "TurnEnded", mark)
        assert stop_of(events) == "Failed"
        line = await sidecar.wait_for(lambda line: line.get("session") == session and "error" in line, "the error")
        assert line["error"]["kind"] == "ProcessExited" and "9" in line["error"]["status"]
        await sidecar.wait_closed(session)


async def test_resume_in_a_new_process_remembers_the_earlier_turn(tmp_path: Path) -> None:
    """Acceptance: the resume token is opencode's session id; a new sidecar (a new opencode serve) resumes it and
    the model's next request carries the earlier turn."""
    async with world_of(tmp_path, plain_scenario()) as world:
        async with sidecar_in(world) as sidecar:
            info = await open_session(sidecar, world)
            await turn(sidecar, info["id"], "remember the word PINEAPPLE")
        token = info["resume_token"]
        async with sidecar_in(world) as sidecar:
            resumed = await open_session(sidecar, world, resume=token)
            assert resumed["resume_token"] == token
            await turn(sidecar, resumed["id"], "which word was it")
        [body] = bodies_with(world, "which word was it")
        assert "PINEAPPLE" in body


async def test_rollback_drops_the_last_turn_from_the_conversation(tmp_path: Path) -> None:
    """Issue 8 part 4: rollback(1) reverts the last turn; the next request has the first turn, not the second."""
    async with world_of(tmp_path, plain_scenario()) as world, sidecar_in(world) as sidecar:
        session = (await open_session(sidecar, world))["id"]
        first = await turn(sidecar, session, "first turn ALPHA")
        usage = [e["kind"]["ContextUsage"] for e in first if kind_of(e) == "ContextUsage"]
        assert usage and usage[-1]["used_tokens"] > 0  # the fake LLM reports 10 input + 5 output tokens
        await turn(sidecar, session, "second turn BRAVO")
        await sidecar.ok("rollback", session=session, turns=1, scope="Conversation")
        await turn(sidecar, session, "third turn CHARLIE")
        [body] = bodies_with(world, "CHARLIE")
        assert "ALPHA" in body and "BRAVO" not in body
        error = await sidecar.error("rollback", session=session, turns=1, scope="ConversationAndFiles")
        assert error["kind"] == "UnsupportedFeature"


async def test_fork_at_a_message_keeps_it_and_drops_what_came_after(tmp_path: Path) -> None:
    """Issue 8 part 4: `fork` + `fork_at` = the `opencode/fork_point` of a MessageEnded → a new session (its own
    token) holding that message and everything before it; the source keeps its whole conversation."""
    async with world_of(tmp_path, plain_scenario()) as world, sidecar_in(world) as sidecar:
        source = await open_session(sidecar, world)
        first = await turn(sidecar, source["id"], "first turn ALPHA")
        await turn(sidecar, source["id"], "second turn BRAVO")
        points = [e["extensions"]["opencode/fork_point"] for e in first if "opencode/fork_point" in e["extensions"]]
        assert points and all(kind_of(e) == "MessageEnded" for e in first if e["extensions"])
        fork = await open_session(sidecar, world, fork=source["resume_token"], fork_at=points[-1])
        assert fork["resume_token"] not in (None, source["resume_token"])
        await turn(sidecar, fork["id"], "forked turn CHARLIE")
        [body] = bodies_with(world, "CHARLIE")
        assert "ALPHA" in body and TEXT in body and "BRAVO" not in body
        await turn(sidecar, source["id"], "source turn DELTA")
        [body] = bodies_with(world, "DELTA")
        assert "ALPHA" in body and "BRAVO" in body and "CHARLIE" not in body
        error = await sidecar.error(
            "open", agent=AGENT, dir=str(world.work), fork=source["resume_token"], fork_at="msg_nope"
        )
        assert error["kind"] == "ResumeFailed"


async def test_compact_runs_as_an_agent_turn_that_reports_the_compaction(tmp_path: Path) -> None:
    """Issue 8 part 4: compact runs opencode's summarize as an agent-originated turn: TurnStarted(Agent), then
    ContextCompacted, then TurnEnded Completed; the summary's own text is not shown as the agent's answer."""
    async with world_of(tmp_path, plain_scenario()) as world, sidecar_in(world) as sidecar:
        session = (await open_session(sidecar, world))["id"]
        await turn(sidecar, session, "first turn ALPHA")
        mark = len(sidecar.lines)
        await sidecar.ok("compact", session=session)
        events = await until(sidecar, session, "TurnEnded", mark)
        # (A late title of the first turn may come first: it belongs to no turn.)
        assert [e["kind"] for e in events if kind_of(e) == "TurnStarted"] == [{"TurnStarted": {"origin": "Agent"}}]
        assert "ContextCompacted" in [kind_of(e) for e in events]
        assert stop_of(events) == "Completed" and texts(events) == []
        events = await turn(sidecar, session, "after the compaction")
        assert TEXT in "".join(texts(events))


async def test_a_question_is_answered_with_a_label_and_the_todo_list_becomes_the_plan(tmp_path: Path) -> None:
    """Issue 8 part 4: opencode's question tool becomes a Question request (choices = its labels) whose answer
    reaches the model; its todo list becomes PlanUpdated. AutoApprove mode: opencode asks no permission at all."""
    question = {
        "question": "Which colour?",
        "header": "Colour",
        "options": [{"label": "red", "description": "warm"}, {"label": "blue", "description": "cool"}],
    }
    todos = {"todos": [{"content": "write tests", "status": "in_progress", "priority": "high"}]}
    scenario = {
        "steps": [
            {"kind": "reply", "tool_calls": [{"name": "question", "arguments": {"questions": [question]}}],
             "match": '"question"'},
            {"kind": "reply", "tool_calls": [{"name": "todowrite", "arguments": todos}], "match": "blue"},
        ],
        "fallback": {"kind": "reply", "text": "tool done"},
    }  # fmt: skip
    async with world_of(tmp_path, scenario) as world, sidecar_in(world) as sidecar:
        session = (await open_session(sidecar, world, permission_mode="AutoApprove"))["id"]
        asked = await prompt(sidecar, session, "ask me a colour", until_kind="RequestOpened")
        request = asked[-1]["kind"]["RequestOpened"]["Question"]
        [asked_question] = request["questions"]
        assert asked_question["text"] == "Which colour?" and asked_question["header"] == "Colour"
        assert [c["label"] for c in asked_question["choices"]] == ["red", "blue"]
        mark = len(sidecar.lines)
        answer = {"Question": [{"Choices": ["blue"]}]}
        await sidecar.ok("answer", session=session, request=request["id"], answer=answer)
        rest = await until(sidecar, session, "TurnEnded", mark)
        assert stop_of(rest) == "Completed" and "".join(texts(rest)) == "tool done"
        plans = [e["kind"]["PlanUpdated"]["entries"] for e in rest if kind_of(e) == "PlanUpdated"]
        assert plans and plans[-1] == [{"text": "write tests", "status": "InProgress"}]
        assert not [
            e for e in asked + rest if kind_of(e) == "RequestOpened" and "Permission" in e["kind"]["RequestOpened"]
        ]
        assert bodies_with(world, "blue"), "the answer never reached the model"


async def test_a_slash_command_runs_through_opencodes_command_route_and_mode_picks_the_agent(tmp_path: Path) -> None:
    """Issue 8 part 4: the session lists opencode's commands; a prompt `/init …` runs that command (its template,
    with the arguments, reaches the model) as an ordinary turn. The live option `mode` lists opencode's primary
    agents; `configure mode plan` is confirmed by SessionUpdated and the next prompt runs as opencode's plan agent
    (its plan-mode reminder reaches the model); a value it does not offer is InvalidConfiguration."""
    async with world_of(tmp_path, plain_scenario()) as world, sidecar_in(world) as sidecar:
        info = await open_session(sidecar, world)
        assert "init" in [command["name"] for command in info["details"]["commands"]]
        options = {option["id"]: option for option in info["details"]["config_options"]}
        assert options["model"]["current"] == "fake/fake-model"
        assert {"build", "plan"} <= {choice["value"] for choice in options["mode"]["kind"]["Select"]["choices"]}
        events = await turn(sidecar, info["id"], "/init mind the FOCUSWORD")
        assert TEXT in "".join(texts(events))
        # The command's template (which names AGENTS.md), with the arguments in it, not the bare prompt.
        assert [body for body in bodies_with(world, "FOCUSWORD") if "AGENTS.md" in body]
        assert not bodies_with(world, "/init mind"), "the command was sent as plain text"
        assert not [body for body in bodies_with(world, "FOCUSWORD") if "Plan Mode" in body]

        mark = len(sidecar.lines)
        await sidecar.ok("configure", session=info["id"], option="mode", value="plan")
        updated = await sidecar.wait_event(info["id"], "SessionUpdated", start=mark)
        assert updated["kind"]["SessionUpdated"]["configuration"]["options"]["mode"] == "plan"
        await turn(sidecar, info["id"], "PLANWORD what next")
        assert [body for body in bodies_with(world, "PLANWORD") if "Plan Mode" in body]
        error = await sidecar.error("configure", session=info["id"], option="mode", value="nonexistent")
        assert error["kind"] == "InvalidConfiguration"


async def test_the_users_own_config_is_kept_and_no_usable_provider_means_auth_required(tmp_path: Path) -> None:
    """The host's OPENCODE_CONFIG_CONTENT reaches opencode with the permission rules merged in: here it disables
    every provider, so opencode has none to use and `open` fails `AuthRequired` with `opencode auth login`."""
    disabled = json.dumps({"disabled_providers": ["fake", "opencode"]})
    async with (
        world_of(tmp_path, plain_scenario()) as world,
        sidecar_in(world, OPENCODE_CONFIG_CONTENT=disabled) as sidecar,
    ):
        error = await sidecar.error("open", agent=AGENT, dir=str(world.work))
        assert error["kind"] == "AuthRequired"
        assert [m["Terminal"]["command"][1:] for m in error["login"] if "Terminal" in m] == [["auth", "login"]]
        assert not world.requests()

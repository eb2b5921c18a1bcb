"""The real `codex app-server` (0.171.0) driven natively through the Runtime, in a loopback-only namespace against the
fake LLM (harness.py). What only the native wire gives: reasoning deltas, plan usage from the provider's rate-limit
headers, resume and fork of a thread, rollback (`thread/revert`), steering, compaction, model and effort options, and
the login check. The plain turn, permissions one at a time, cancel and kill run for every peer in
test_real_agents.py.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.sidecar.agents import (
    AuthUnknown,
    Capability,
    McpTransport,
    TerminalLogin,
)
from omniagent.protocols.sidecar.base import DiagnosticLevel
from omniagent.protocols.sidecar.commands import (
    HttpMcp,
    McpServer,
    PermissionAnswer,
    RollbackScope,
    StdioMcp,
    Steered,
)
from omniagent.protocols.sidecar.events import (
    Cancelled,
    Completed,
    ContextCompacted,
    ContextUsage,
    DiagnosticEvent,
    Event,
    MessageEnded,
    PermissionAsk,
    PermissionChoice,
    PlanUsageUpdated,
    ReasoningDelta,
    RequestOpened,
    SessionUpdated,
)
from omniagent.runtime.errors import (
    AuthRequired,
    InvalidConfiguration,
    ProtocolFailed,
    ResumeFailed,
    UnsupportedFeature,
)
from omniagent.runtime.runtime import Runtime
from omniagent.runtime.session import Session
from tests.e2e.agents.drive import is_permission, is_text, is_turn_end, text_of, turn_end, until
from tests.e2e.agents.harness import LOG_POLL, STEP, World, agent_world
from tests.e2e.agents.logins import login_world
from tests.e2e.agents.peers import ESCALATED
from tests.event_stream import is_kind, of

pytestmark = pytest.mark.timeout(300)
AGENT = "codex"
ECHO_SERVER = Path(__file__).resolve().parents[2] / "fixtures" / "mcp" / "echo_server.py"
# The provider headers codex 0.171.0 turns into `account/rateLimits/updated` windows.
RATE_LIMITS = {
    "x-codex-primary-used-percent": "42.4",
    "x-codex-primary-window-minutes": "300",
    "x-codex-primary-reset-at": "1900000000",
    "x-codex-secondary-used-percent": "7",
    "x-codex-secondary-window-minutes": "10080",
    "x-codex-secondary-reset-at": "1900500000",
}


def _touch(name: str) -> dict[str, Any]:
    return {"name": "exec_command", "arguments": ESCALATED | {"cmd": f"touch {name}"}}


def _texts(*texts: str) -> dict[str, Any]:
    """A scenario answering each main call with the next text, then "fallback"."""
    steps = [{"kind": "reply", "text": text} for text in texts]
    return {"steps": steps, "fallback": {"kind": "reply", "text": "fallback"}}


async def _open(runtime: Runtime, world: World, **options: Any) -> Session:
    return await runtime.open(AGENT, world.work, **options)


async def _turn(session: Session, text: str) -> list[Event]:
    await session.prompt(text)
    events = await until(session, is_turn_end)
    assert isinstance(turn_end(events).stop, Completed), turn_end(events).stop
    return events


def _last_body(world: World) -> str:
    """The JSON of the fake LLM's last `/v1/responses` body: what the model was sent."""
    bodies = [r["body"] for r in world.requests() if r["path"].endswith("/responses")]
    return json.dumps(bodies[-1])


async def test_a_turn_streams_reasoning_and_text_asks_twice_and_reports_usage(tmp_path: Path) -> None:
    """Issue 8 item 2: `Runtime.open` → prompt → reasoning and text deltas (`summary:"auto"`), a command approval
    allowed once (the file appears), then in the next turn one denied once (no file, the model is told and answers);
    context usage, plan usage from the provider's rate-limit headers, a fork point on each answer."""
    scenario = {
        "steps": [
            {"kind": "reply", "reasoning": "thinking it over", "tool_calls": [_touch("a.txt")], "headers": RATE_LIMITS},
            {"kind": "reply", "text": "first done"},
            {"kind": "reply", "tool_calls": [_touch("b.txt")]},
            {"kind": "reply", "text": "second done"},
        ],
        "fallback": {"kind": "reply", "text": "fallback"},
    }
    async with agent_world(AGENT, tmp_path, scenario) as world, Runtime(env=world.runtime_env) as runtime:
        session = await _open(runtime, world)
        details = session.info().details
        assert details.version == "0.171.0" and isinstance(details.auth, AuthUnknown)  # custom provider: no login
        features = set(details.capabilities.features)
        assert {Capability.STEER, Capability.ROLLBACK, Capability.FORK, Capability.COMPACT} <= features
        assert Capability.PLAN_USAGE not in features  # no ChatGPT plan behind a custom provider
        for name, choice, text, created in (
            ("a.txt", PermissionChoice.ALLOW_ONCE, "first done", True),
            ("b.txt", PermissionChoice.DENY_ONCE, "second done", False),
        ):
            await session.prompt(f"create {name}")
            asked = await until(session, is_permission)
            opened = asked[-1].kind
            assert isinstance(opened, RequestOpened) and isinstance(opened.request, PermissionAsk)
            request = opened.request.request
            assert request.options == [
                PermissionChoice.ALLOW_ONCE,
                PermissionChoice.ALLOW_ALWAYS,
                PermissionChoice.DENY_ONCE,
            ]
            assert request.detail == "create the marker file" and name in request.tool.title
            await session.answer(request.id, PermissionAnswer(choice=choice))
            rest = await until(session, is_turn_end)
            events = asked + rest
            assert isinstance(turn_end(rest).stop, Completed) and text_of(rest) == text
            assert (world.work / name).exists() is created
            if name == "a.txt":
                assert "".join(r.text for r in of(events, ReasoningDelta)) == "thinking it over"
                assert of(events, ContextUsage)[-1].window_tokens == 258400
                usage = of(events, PlanUsageUpdated)[-1].usage
                windows = [(w.label, w.used_percent, w.resets_at) for w in usage.windows]
                assert [(label, used) for label, used, _ in windows] == [("Session", 42), ("Week", 7)]
                assert [at.secs_since_epoch for *_, at in windows if at] == [1900000000, 1900500000]
            ended = [e for e in rest if isinstance(e.kind, MessageEnded) and "codex/fork_point" in e.extensions]
            assert ended, "the answer's MessageEnded carries its fork point"


async def test_resume_in_a_new_process_remembers_the_earlier_turn(tmp_path: Path) -> None:
    """Issue 8: the resume token is the thread id; a new app-server resuming it sends the earlier turn to the model."""
    async with agent_world(AGENT, tmp_path, _texts("noted", "it was zebra")) as world:
        async with Runtime(env=world.runtime_env) as runtime:
            first = await _open(runtime, world)
            token = first.info().resume_token
            assert token
            await _turn(first, "remember the word zebra-42")
            pid = world.agent_pid()
            await first.close()
        async with Runtime(env=world.runtime_env) as runtime:
            second = await _open(runtime, world, resume=token)
            assert world.agent_pid() != pid and second.info().resume_token == token
            events = await _turn(second, "which word?")
            assert text_of(events) == "it was zebra"
            assert "zebra-42" in _last_body(world)


async def test_a_bad_resume_token_fails_with_resume_failed(tmp_path: Path) -> None:
    """A `thread/resume` the server refuses is `ResumeFailed`, not a protocol failure."""
    async with agent_world(AGENT, tmp_path, _texts()) as world, Runtime(env=world.runtime_env) as runtime:
        with pytest.raises(ResumeFailed):
            await _open(runtime, world, resume="01a00000-0000-7000-8000-000000000000")


async def test_fork_at_a_fork_point_keeps_the_turns_up_to_it(tmp_path: Path) -> None:
    """`thread/fork` with `lastTurnId` = the first answer's fork point: the fork is a new thread that knows the first
    turn and not the second; the original keeps both."""
    scenario = _texts("one", "two", "three")
    async with agent_world(AGENT, tmp_path, scenario) as world, Runtime(env=world.runtime_env) as runtime:
        session = await _open(runtime, world)
        first = await _turn(session, "alpha-one")
        await _turn(session, "beta-two")
        point = next(e.extensions["codex/fork_point"] for e in first if "codex/fork_point" in e.extensions)
        token = session.info().resume_token
        fork = await _open(runtime, world, fork=token, fork_at=point)
        assert fork.info().resume_token not in (None, token)
        await _turn(fork, "gamma-three")
        body = _last_body(world)
        assert "alpha-one" in body and "beta-two" not in body


async def test_rollback_drops_the_last_turn_from_the_history(tmp_path: Path) -> None:
    """Rollback(1) reverts the thread to before its last turn (`thread/revert`); files are not rolled back, so
    `ConversationAndFiles` is refused."""
    scenario = _texts("one", "two", "three")
    async with agent_world(AGENT, tmp_path, scenario) as world, Runtime(env=world.runtime_env) as runtime:
        session = await _open(runtime, world)
        await _turn(session, "alpha-one")
        await _turn(session, "beta-two")
        with pytest.raises(UnsupportedFeature):
            await session.rollback(1, RollbackScope.CONVERSATION_AND_FILES)
        await session.rollback(1, RollbackScope.CONVERSATION)
        await _turn(session, "gamma-three")
        body = _last_body(world)
        assert "alpha-one" in body and "beta-two" not in body and "gamma-three" in body


async def test_a_prompt_during_a_turn_steers_it(tmp_path: Path) -> None:
    """Steer: a prompt while the model streams is delivered `Steered` into the running turn (`turn/steer`), and the
    model's next call in that turn carries it."""
    slow = {"kind": "reply", "text": "slow " * 10, "chunk_delay": 0.3}
    scenario = {"steps": [slow, {"kind": "reply", "text": "steered"}], "fallback": {"kind": "reply", "text": "x"}}
    async with agent_world(AGENT, tmp_path, scenario) as world, Runtime(env=world.runtime_env) as runtime:
        session = await _open(runtime, world)
        await session.prompt("talk slowly")
        await until(session, is_text)
        delivery = await session.prompt("steer-word-77")
        assert isinstance(delivery.kind, Steered)
        events = await until(session, is_turn_end)
        assert isinstance(turn_end(events).stop, Completed) and text_of(events).endswith("steered")
        assert "steer-word-77" in _last_body(world)


async def test_compact_runs_as_an_agent_turn(tmp_path: Path) -> None:
    """Compact: `thread/compact/start` runs a turn of the agent's own that reports `ContextCompacted`."""
    async with agent_world(AGENT, tmp_path, _texts("one", "summary")) as world, Runtime(env=world.runtime_env) as rt:
        session = await _open(rt, world)
        await _turn(session, "alpha-one")
        await session.compact()
        events = await until(session, is_turn_end)
        assert of(events, ContextCompacted) and isinstance(turn_end(events).stop, Completed)


async def test_model_and_effort_are_checked_up_front_and_ride_each_turn(tmp_path: Path) -> None:
    """Options: a model `model/list` lacks is refused before any thread exists; the effort asked for at creation, and
    later a live change, reach the model call; the approval policy is creation-only."""
    async with agent_world(AGENT, tmp_path, _texts("one", "two")) as world, Runtime(env=world.runtime_env) as rt:
        with pytest.raises(InvalidConfiguration, match="not a choice"):
            await _open(rt, world, configure={"model": "no-such-model"})
        session = await _open(rt, world, configure={"effort": "high"})
        assert session.info().configuration.options["effort"] == "high"
        await _turn(session, "alpha-one")
        assert json.loads(_last_body(world))["reasoning"]["effort"] == "high"
        await session.configure("effort", "low")
        await _turn(session, "beta-two")
        assert json.loads(_last_body(world))["reasoning"]["effort"] == "low"
        with pytest.raises(InvalidConfiguration, match="creation-only"):
            await session.configure("mode", "never")


async def test_a_missing_login_is_auth_required_with_codex_login(tmp_path: Path) -> None:
    """`account/read` with no account while OpenAI auth is required: `AuthRequired` naming `codex login`."""
    async with agent_world(AGENT, tmp_path, _texts()) as world, Runtime(env=world.runtime_env) as runtime:
        (world.home / ".codex" / "config.toml").write_text(
            "check_for_update_on_startup = false\n[features]\nplugins = false\n", encoding="utf-8"
        )
        with pytest.raises(AuthRequired) as refused:
            await _open(runtime, world)
        commands = [m.command for m in refused.value.login if isinstance(m, TerminalLogin)]
        assert commands == [[str(world.launcher), "login"]]


async def test_a_cancel_sent_with_the_prompt_interrupts_the_turn_once_it_exists(tmp_path: Path) -> None:
    """Cancel right after the prompt, before the app-server has even started the turn: `turn/interrupt` needs the
    turn id, so it is held until `turn/started`; the turn ends `Cancelled` and the session takes the next prompt.
    (Every call streams for ~1 s: the interrupt may land before or after the model call, whichever turn makes it.)"""
    slow = {"kind": "reply", "text": "slow " * 5, "chunk_delay": 0.2}
    scenario = {"steps": [], "fallback": slow}
    async with agent_world(AGENT, tmp_path, scenario) as world, Runtime(env=world.runtime_env) as runtime:
        session = await _open(runtime, world)
        await session.prompt("talk slowly")
        await session.cancel()
        events = await until(session, is_turn_end)
        assert isinstance(turn_end(events).stop, Cancelled)
        events = await _turn(session, "again")
        assert text_of(events) == "slow " * 5


async def test_generate_returns_the_answer_of_a_one_shot_thread(tmp_path: Path) -> None:
    """`Runtime.generate` on codex: a new thread under `untrusted` / `read-only` (tools cannot be switched off on
    this wire, so any would ask and be declined), one prompt, the answer's text."""
    async with agent_world(AGENT, tmp_path, _texts("generated")) as world, Runtime(env=world.runtime_env) as runtime:
        assert await runtime.generate(AGENT, world.work, "say it") == "generated"


def _uses(model: str) -> Callable[[Event], bool]:
    return lambda e: isinstance(e.kind, SessionUpdated) and e.kind.info.configuration.options.get("model") == model


def _lists_commands(event: Event) -> bool:
    return isinstance(event.kind, SessionUpdated) and bool(event.kind.info.details.commands)


async def test_skills_are_slash_commands_and_a_slash_prompt_sends_the_skill(tmp_path: Path) -> None:
    """`skills/list` arrives after `open` as slash commands (a `SessionUpdated`); a prompt starting with `/<skill>`
    goes in with that skill as an input, so the model call carries the skill's instructions."""
    async with agent_world(AGENT, tmp_path, _texts("one")) as world, Runtime(env=world.runtime_env) as runtime:
        session = await _open(runtime, world)
        updated = await until(session, _lists_commands)
        last = updated[-1].kind
        assert isinstance(last, SessionUpdated)
        assert "skill-creator" in [command.name for command in last.info.details.commands]
        await _turn(session, "/skill-creator make one")
        body = _last_body(world)
        assert "<skill>" in body and "quick_validate" in body


async def test_the_servers_warnings_are_warning_diagnostics(tmp_path: Path) -> None:
    """A model from config.toml that codex's catalogue lacks: the option still shows it as current, and the
    server's `warning` about its metadata reaches the turn as a Warning diagnostic."""
    async with agent_world(AGENT, tmp_path, _texts("one")) as world, Runtime(env=world.runtime_env) as runtime:
        config = world.home / ".codex" / "config.toml"
        config.write_text(config.read_text().replace('model = "gpt-5.5"', 'model = "gpt-5"'), encoding="utf-8")
        session = await _open(runtime, world)
        assert session.info().configuration.options["model"] == "gpt-5"
        events = await _turn(session, "hi")
        diagnostics = [event.diagnostic for event in of(events, DiagnosticEvent)]
        warnings = [d.message for d in diagnostics if d.level is DiagnosticLevel.WARNING]
        assert any("gpt-5" in message for message in warnings), warnings


async def test_a_stdio_mcp_server_is_started_by_codex_and_others_are_refused(tmp_path: Path) -> None:
    """MCP: a stdio server passed to `open` rides `thread/start` as codex's `mcp_servers` config; codex starts it
    with its arguments and environment (the fixture server records its `initialize`). HTTP servers are refused
    before anything starts (not seen to work over this wire)."""
    log = tmp_path / "mcp.log"
    echo = McpServer(
        name="echo",
        connection=StdioMcp(command=sys.executable, args=[str(ECHO_SERVER), str(log)], env={"ECHO_MCP_TAG": "t-42"}),
    )
    web = McpServer(name="web", connection=HttpMcp(url="http://127.0.0.1:9/mcp", headers={}))
    async with agent_world(AGENT, tmp_path, _texts("one")) as world, Runtime(env=world.runtime_env) as runtime:
        with pytest.raises(UnsupportedFeature, match="Http MCP servers"):
            await _open(runtime, world, mcp_servers=[web])
        session = await _open(runtime, world, mcp_servers=[echo])
        assert session.info().details.capabilities.mcp_transports == [McpTransport.STDIO]
        await _turn(session, "hi")
        assert (await _first_line(log)) == "initialize t-42"


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


async def _first_line(path: Path) -> str:
    """The first whole line of a file another process writes (polled, bounded)."""
    async with asyncio.timeout(STEP):
        while True:
            text = _read(path)
            if "\n" in text:
                return text.split("\n", 1)[0]
            await asyncio.sleep(LOG_POLL)


async def test_an_app_server_that_refuses_its_config_fails_open_with_its_words(tmp_path: Path) -> None:
    """codex 0.171.0 exits at start on `approval_policy = "untrusted"` in config.toml: `open` fails `ProtocolFailed`
    carrying the app-server's own complaint from stderr, without waiting for the handshake timeout."""
    async with agent_world(AGENT, tmp_path, _texts()) as world, Runtime(env=world.runtime_env) as runtime:
        config = world.home / ".codex" / "config.toml"
        config.write_text(config.read_text().replace('"on-request"', '"untrusted"'), encoding="utf-8")
        with pytest.raises(ProtocolFailed, match="no longer supported"):
            await _open(runtime, world)


async def test_switching_to_a_model_without_the_effort_sends_the_new_models_default(tmp_path: Path) -> None:
    """A live model switch to one that lacks the chosen effort (gpt-5.5 has no `max`): the option falls back to the
    new model's default and that is what the next model call carries (the server would keep `max` otherwise)."""
    async with agent_world(AGENT, tmp_path, _texts("one", "two")) as world, Runtime(env=world.runtime_env) as rt:
        session = await _open(rt, world, configure={"model": "gpt-6.2-sol", "effort": "max"})
        await _turn(session, "alpha-one")
        assert json.loads(_last_body(world))["reasoning"]["effort"] == "max"
        await session.configure("model", "gpt-5.5")
        switched = (await until(session, _uses("gpt-5.5")))[-1].kind
        assert isinstance(switched, SessionUpdated)
        effort = switched.info.configuration.options["effort"]
        assert effort not in ("max", None)
        await _turn(session, "beta-two")
        body = json.loads(_last_body(world))
        assert (body["model"], body["reasoning"]["effort"]) == ("gpt-5.5", effort)


async def test_a_login_the_server_cannot_read_only_warns(tmp_path: Path) -> None:
    """A ChatGPT login whose `account/read` fails (0.171.0 first looks the account's workspace up at the ChatGPT
    backend, which the fake does not serve) still opens: the login is `Unknown` and a Warning says why. (Its
    `model/list` and `thread/start` wait ~15 s in all for an OpenAI backend that is unreachable here.)"""
    async with login_world(tmp_path) as world:
        chatgpt = world.launcher("codex", "chatgpt")
        async with Runtime(env=world.runtime_env(codex=chatgpt)) as runtime:
            session = await runtime.open(AGENT, tmp_path)
            assert isinstance(session.info().details.auth, AuthUnknown)
            warned = await until(session, is_kind(DiagnosticEvent))
            diagnostic = of(warned, DiagnosticEvent)[-1].diagnostic
            assert diagnostic.level is DiagnosticLevel.WARNING
            assert "could not read the codex login: workspace routing" in diagnostic.message

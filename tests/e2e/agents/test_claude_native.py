"""Claude Code 2.1.197 driven natively (stream-json, `runtime/adapters/claude*.py`) through the Runtime, in a
loopback-only network namespace against the fake LLM (harness.py). The plain, permission, cancel and kill turns run
in test_real_agents.py with every peer; these are the native adapter's own: text streamed once, the permission's
shape, questions, resume in a new process, fork, model and mode options, compaction, MCP servers, login errors.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.sidecar.agents import ApiKey, Authenticated, Capability, EnvVarLogin, TerminalLogin
from omniagent.protocols.sidecar.commands import (
    ChoicesAnswer,
    McpServer,
    PermissionAnswer,
    QuestionsAnswer,
    StdioMcp,
)
from omniagent.protocols.sidecar.events import (
    Cancelled,
    CommandInput,
    Completed,
    ContextCompacted,
    ContextUsage,
    Execute,
    Failed,
    FromAgent,
    MessageEnded,
    PermissionAsk,
    PermissionChoice,
    QuestionAsk,
    RequestClosed,
    RequestOpened,
    SessionUpdated,
    TextDelta,
    ToolStatus,
    ToolUpdated,
    TurnStarted,
)
from omniagent.runtime.adapters.claude.translate import FORK_POINT
from omniagent.runtime.errors import AuthRequired, InvalidConfiguration, ResumeFailed
from omniagent.runtime.runtime import Runtime
from tests.e2e.agents.drive import is_permission, is_turn_end, runtime_session, text_of, turn_end, until
from tests.e2e.agents.harness import STEP, World, agent_world, plain_scenario, tool_scenario
from tests.e2e.agents.peers import TEXT
from tests.event_stream import is_kind, of

AGENT = "claude"
MCP_SERVER = Path(__file__).resolve().parents[2] / "fixtures" / "mcp_ping_server.py"
QUESTION_CALL = {
    "name": "AskUserQuestion",
    "arguments": {
        "questions": [
            {
                "question": "Which colour?",
                "header": "Colour",
                "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}],
                "multiSelect": False,
            }
        ]
    },
}
pytestmark = pytest.mark.timeout(300)


def _model_calls(world: World) -> list[dict[str, Any]]:
    """The agent's model calls (`/v1/messages`), oldest first."""
    return [r for r in world.requests() if r["path"].endswith("/v1/messages")]


async def test_text_streams_once_and_the_turn_reports_context_usage(tmp_path: Path) -> None:
    """With partial messages the CLI sends the text as deltas and again whole: the caller sees it once, in several
    deltas of one message that ends; the result's usage becomes ContextUsage; the session describes itself."""
    async with agent_world(AGENT, tmp_path, plain_scenario()) as world, runtime_session(world) as session:
        info = session.info()
        assert info.details.version == "2.1.197"
        assert isinstance(info.details.auth, Authenticated) and isinstance(info.details.auth.kind, ApiKey)
        features = set(info.details.capabilities.features)
        assert {Capability.PERMISSIONS, Capability.RESUME, Capability.FORK, Capability.COMPACT} <= features
        assert Capability.PLAN_USAGE not in features  # an API key has no plan quota
        assert info.resume_token and len(info.resume_token) == 36
        assert {o.id for o in info.details.config_options} >= {"mode", "model"}
        await session.prompt("say hello")
        events = await until(session, is_turn_end)
        deltas = of(events, TextDelta)
        assert "".join(d.text for d in deltas) == TEXT and len(deltas) > 1
        assert {d.message_id for d in deltas} <= {m.message_id for m in of(events, MessageEnded)}
        usage = of(events, ContextUsage)
        assert len(usage) == 1 and usage[0].used_tokens > 0 and (usage[0].window_tokens or 0) > 0
        assert isinstance(turn_end(events).stop, Completed)
        # The tools arrive with the first prompt's system/init: AskUserQuestion makes questions available.
        assert Capability.QUESTIONS in session.info().details.capabilities.features


async def test_the_permission_offers_allow_always_and_the_tool_completes(tmp_path: Path) -> None:
    """`can_use_tool` with rule suggestions offers AllowOnce, AllowAlways and DenyOnce on the Bash call's snapshot;
    allowing runs it and the tool ends Completed."""
    async with agent_world(AGENT, tmp_path, tool_scenario(AGENT)) as world, runtime_session(world) as session:
        await session.prompt("create the marker file")
        asked = await until(session, is_permission)
        opened = asked[-1].kind
        assert isinstance(opened, RequestOpened) and isinstance(opened.request, PermissionAsk)
        request = opened.request.request
        assert request.options == [
            PermissionChoice.ALLOW_ONCE,
            PermissionChoice.ALLOW_ALWAYS,
            PermissionChoice.DENY_ONCE,
        ]
        assert isinstance(request.tool.kind, Execute) and isinstance(request.tool.input, CommandInput)
        assert request.tool.input.spec.command == "touch fake_tool_ran.txt"
        await session.answer(request.id, PermissionAnswer(choice=PermissionChoice.ALLOW_ALWAYS))
        rest = await until(session, is_turn_end)
        statuses = [u.tool.status for u in of(rest, ToolUpdated) if u.tool.id == request.tool.id]
        assert statuses[-1] is ToolStatus.COMPLETED
        assert world.touched.exists() and text_of(rest) == "tool done"


async def test_cancel_while_a_permission_is_open_denies_it_and_ends_the_turn_cancelled(tmp_path: Path) -> None:
    """Cancel with the permission still open: the request closes, the CLI is told no and interrupted, the turn ends
    Cancelled (not Failed, although the CLI's result says `error_during_execution`), the command never runs, and
    the session takes the next prompt."""
    async with agent_world(AGENT, tmp_path, tool_scenario(AGENT)) as world, runtime_session(world) as session:
        await session.prompt("create the marker file")
        asked = await until(session, is_permission)
        opened = asked[-1].kind
        assert isinstance(opened, RequestOpened)
        await session.cancel()
        events = await until(session, is_turn_end)
        assert isinstance(turn_end(events).stop, Cancelled)
        assert [c.request_id for c in of(events, RequestClosed)] == [opened.request.request.id]
        await session.prompt("say hello")
        again = await until(session, is_turn_end)
        assert isinstance(turn_end(again).stop, Completed)
        assert not world.touched.exists()


async def test_a_question_is_answered_with_the_chosen_label(tmp_path: Path) -> None:
    """AskUserQuestion arrives as a Question request (choice ids are the labels); the answer reaches the model."""
    step = {"kind": "reply", "tool_calls": [QUESTION_CALL], "match": '"AskUserQuestion"'}
    scenario = {"steps": [step], "fallback": {"kind": "reply", "text": "answered"}}
    async with agent_world(AGENT, tmp_path, scenario) as world, runtime_session(world) as session:
        await session.prompt("ask me a colour")
        asked = await until(session, is_kind(RequestOpened))
        opened = asked[-1].kind
        assert isinstance(opened, RequestOpened) and isinstance(opened.request, QuestionAsk)
        question = opened.request.request.questions[0]
        assert (question.id, question.text, question.header) == ("q0", "Which colour?", "Colour")
        assert [c.id for c in question.choices] == ["Red", "Blue"] and not question.allows_free_text
        await session.answer(opened.request.request.id, QuestionsAnswer(answers=[ChoicesAnswer(ids=["Blue"])]))
        events = await until(session, is_turn_end)
        assert isinstance(turn_end(events).stop, Completed) and text_of(events) == "answered"
        assert '\\"Which colour?\\"=\\"Blue\\"' in json.dumps(_model_calls(world)[-1]["body"])


async def test_a_new_process_resumes_the_session_and_a_fork_gets_its_own_id(tmp_path: Path) -> None:
    """Resume: a new Runtime (a new CLI process) opened with the resume token continues the conversation, so the
    model call carries the earlier prompt. Fork: a copy under a new token that also remembers it."""
    async with agent_world(AGENT, tmp_path, plain_scenario()) as world:
        async with runtime_session(world) as first:
            token = first.info().resume_token
            await first.prompt("remember the word pelican")
            assert isinstance(turn_end(await until(first, is_turn_end)).stop, Completed)
        for fork in (False, True):
            async with Runtime(env=world.runtime_env) as runtime:
                session = await runtime.open(
                    AGENT, world.work, resume=None if fork else token, fork=token if fork else None
                )
                assert (session.info().resume_token == token) is not fork
                await session.prompt("which word was it?")
                events = await until(session, is_turn_end)
                assert isinstance(turn_end(events).stop, Completed) and text_of(events) == TEXT
                body = json.dumps(_model_calls(world)[-1]["body"])
                assert "remember the word pelican" in body and "which word was it?" in body


async def test_a_fork_at_a_message_keeps_the_conversation_up_to_it(tmp_path: Path) -> None:
    """Each ended message carries its fork point (extension `claude/fork_point`); a fork at the first turn's message
    remembers the first prompt and not the second."""
    async with agent_world(AGENT, tmp_path, plain_scenario()) as world:
        async with runtime_session(world) as first:
            token = first.info().resume_token
            await first.prompt("remember the word pelican")
            ended = [e for e in await until(first, is_turn_end) if isinstance(e.kind, MessageEnded)]
            await first.prompt("now the word walrus")
            await until(first, is_turn_end)
        points = [e.extensions.get(FORK_POINT) for e in ended]
        assert points and all(isinstance(point, str) for point in points)
        async with Runtime(env=world.runtime_env) as runtime:
            fork = await runtime.open(AGENT, world.work, fork=token, fork_at=str(points[-1]))
            await fork.prompt("which word was it?")
            assert isinstance(turn_end(await until(fork, is_turn_end)).stop, Completed)
        body = json.dumps(_model_calls(world)[-1]["body"])
        assert "pelican" in body and "walrus" not in body


async def test_a_bad_resume_token_fails_the_open(tmp_path: Path) -> None:
    async with agent_world(AGENT, tmp_path, plain_scenario()) as world, Runtime(env=world.runtime_env) as runtime:
        with pytest.raises(ResumeFailed, match="No conversation found"):
            await runtime.open(AGENT, world.work, resume="00000000-0000-4000-8000-000000000000")


async def test_model_and_mode_are_set_at_creation_and_live(tmp_path: Path) -> None:
    """Creation: flags (`--model`, `--permission-mode`, `--effort`); live: set_model / set_permission_mode, confirmed
    by a SessionUpdated; the model (and effort) is what the next model call asks for. Bad values never reach the
    CLI, which would take anything."""
    async with agent_world(AGENT, tmp_path, plain_scenario()) as world, Runtime(env=world.runtime_env) as runtime:
        with pytest.raises(InvalidConfiguration):
            await runtime.open(AGENT, world.work, configure={"colour": "blue"})
        with pytest.raises(InvalidConfiguration):
            await runtime.open(AGENT, world.work, configure={"mode": "reckless"})
        with pytest.raises(InvalidConfiguration):  # not one of the model's effort levels
            await runtime.open(AGENT, world.work, configure={"effort": "extreme"})
        creation = {"model": "sonnet", "mode": "acceptEdits", "effort": "low"}
        session = await runtime.open(AGENT, world.work, configure=creation)
        assert session.info().configuration.options == creation
        await session.prompt("hello")
        await until(session, is_turn_end)
        body = _model_calls(world)[-1]["body"]
        assert body["model"] == "claude-sonnet-5" and body["output_config"] == {"effort": "low"}
        with pytest.raises(InvalidConfiguration):  # effort is creation-only
            await session.configure("effort", "high")
        await session.configure("model", "haiku")
        # Not `plan`: in plan mode the CLI picks its own planning model (observed: sonnet after set_model haiku).
        await session.configure("mode", "default")
        updates = await until(session, lambda e: _option(e, "mode") == "default")
        assert _option(updates[-1], "model") == "haiku"
        with pytest.raises(InvalidConfiguration):
            await session.configure("model", "no-such-model")
        await session.prompt("hello again")
        await until(session, is_turn_end)
        assert _model_calls(world)[-1]["body"]["model"].startswith("claude-haiku")


def _option(event: Any, option: str) -> Any:
    kind = event.kind
    return kind.info.configuration.options.get(option) if isinstance(kind, SessionUpdated) else None


async def test_compact_runs_as_an_agent_turn_and_a_refusal_fails_it(tmp_path: Path) -> None:
    """`compact` sends `/compact` as an agent-originated turn. Against the fake LLM's short turns the CLI refuses
    ("Not enough messages to compact.", in a `system/status` with `compact_result: failed`, then a success result):
    the turn fails with that reason, nothing is reported compacted, and the session goes on."""
    async with agent_world(AGENT, tmp_path, plain_scenario()) as world, runtime_session(world) as session:
        for text in ("first", "second"):
            await session.prompt(text)
            await until(session, is_turn_end)
        await session.compact()
        events = await until(session, is_turn_end)
        started = of(events, TurnStarted)
        assert started and isinstance(started[0].origin, FromAgent)
        assert not of(events, ContextCompacted)
        stop = turn_end(events).stop
        assert isinstance(stop, Failed) and stop.message == "Not enough messages to compact."
        await session.prompt("after")
        assert isinstance(turn_end(await until(session, is_turn_end)).stop, Completed)
        assert "after" in json.dumps(_model_calls(world)[-1]["body"])


async def test_mcp_servers_reach_the_model_as_tools(tmp_path: Path) -> None:
    """The caller's stdio MCP server is forwarded with `--mcp-config`; the model call lists its tool."""
    server = McpServer(name="probe", connection=StdioMcp(command=sys.executable, args=[str(MCP_SERVER)], env={}))
    async with agent_world(AGENT, tmp_path, plain_scenario()) as world, Runtime(env=world.runtime_env) as runtime:
        session = await runtime.open(AGENT, world.work, mcp_servers=[server])
        await session.prompt("hello")
        await until(session, is_turn_end)
        assert "mcp__probe__ping" in json.dumps(_model_calls(world)[-1]["body"])


async def test_no_credential_fails_the_open_with_auth_required(tmp_path: Path) -> None:
    """Without an API key or a login the `initialize` answer says so: AuthRequired, with the login command and
    the key variable as ways in."""
    world_without_key = agent_world(AGENT, tmp_path, plain_scenario(), unset=("ANTHROPIC_API_KEY",))
    async with world_without_key as world, Runtime(env=world.runtime_env) as runtime:
        with pytest.raises(AuthRequired) as raised:
            await runtime.open(AGENT, world.work)
    logins = raised.value.login
    assert any(isinstance(m, TerminalLogin) and m.command[-2:] == ["auth", "login"] for m in logins)
    assert EnvVarLogin(name="ANTHROPIC_API_KEY") in logins


async def test_a_rejected_key_mid_session_ends_it_with_auth_required(tmp_path: Path) -> None:
    """A 401 from the provider (the CLI would retry it for minutes) fails the turn and closes the session with
    AuthRequired."""
    scenario = {"steps": [], "fallback": {"kind": "error", "status": 401, "error_type": "authentication_error"}}
    async with agent_world(AGENT, tmp_path, scenario) as world, runtime_session(world) as session:
        await session.prompt("hello")
        seen: list[Any] = []
        with pytest.raises(AuthRequired):
            async with asyncio.timeout(STEP):
                async for event in session.events:
                    seen.append(event)
        assert isinstance(turn_end(seen).stop, Failed)


async def test_probe_reports_the_agent_and_leaves_no_transcript(tmp_path: Path) -> None:
    """`probe` opens a throwaway session and closes it unprompted: the details come back and the CLI has written
    no conversation under its config dir (nothing to resume later, nothing to clean up)."""
    async with agent_world(AGENT, tmp_path, plain_scenario()) as world, Runtime(env=world.runtime_env) as runtime:
        details = await runtime.probe(AGENT)
    assert details.version == "2.1.197" and Capability.PERMISSIONS in details.capabilities.features
    assert not list((world.home / ".claude").rglob("*.jsonl"))
    assert not world.requests()


async def test_generate_launches_without_tools_and_returns_the_text(tmp_path: Path) -> None:
    """`generate` starts the CLI with `--tools ""`: the model is offered no tool and the text comes back."""
    async with agent_world(AGENT, tmp_path, plain_scenario()) as world, Runtime(env=world.runtime_env) as runtime:
        text = await runtime.generate(AGENT, world.work, "say hello")
    assert text == TEXT
    body = _model_calls(world)[-1]["body"]
    assert not body.get("tools") and '"Bash"' not in json.dumps(body)

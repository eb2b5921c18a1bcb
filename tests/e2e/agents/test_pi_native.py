"""pi 0.73.1 driven natively (`pi --mode rpc`, its own JSONL RPC) through the Runtime, in a loopback-only network
namespace against the fake LLM (harness.py, peers.py).

Issue 8, item 3: streamed deltas, a tool call shown as ToolUpdated without any permission ask (pi has no permission
protocol), TurnEnded on pi's `agent_end`; cancel (`abort`) mid-turn then a next prompt; steer; resume by session
file in a new process with the earlier turn remembered; `model` / `effort` from the handshake, at open and live;
extension-UI dialogs as questions; compaction. Every event is checked against the sidecar schema (`until`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.sidecar.agents import Capability, EnvVarLogin, SelectKind, SessionInfo, TerminalLogin
from omniagent.protocols.sidecar.commands import ChoicesAnswer, QuestionsAnswer, Steered, TextAnswer
from omniagent.protocols.sidecar.events import (
    Cancelled,
    CommandInput,
    Completed,
    CompletionSource,
    ContextCompacted,
    ContextUsage,
    Execute,
    Failed,
    FromAgent,
    QuestionAsk,
    RequestOpened,
    SessionUpdated,
    StopLimit,
    TextDelta,
    ToolStatus,
    ToolUpdated,
    TurnStarted,
)
from omniagent.runtime.errors import AuthRequired, InvalidConfiguration, ResumeFailed, UnsupportedFeature
from omniagent.runtime.runtime import Runtime
from omniagent.runtime.session import Session
from tests.e2e.agents.drive import is_text, is_turn_end, text_of, turn_end, until
from tests.e2e.agents.harness import ROUTER, World, agent_world, plain_scenario, slow_scenario, tool_scenario
from tests.e2e.agents.peers import COMMAND, PEERS, PI_MODELS, TEXT
from tests.event_stream import of
from tests.sidecar_schema import validate

pytestmark = pytest.mark.timeout(300)
MODELS = [f"fake/{model}" for model in PI_MODELS]
# A pi extension (TypeScript, loaded by pi itself) whose `/ask` opens each dialog kind and writes the answers.
ASK_EXTENSION = """
import { writeFileSync } from "node:fs";
import { join } from "node:path";
export default function (pi: any) {
  pi.registerCommand("ask", {
    description: "Ask three questions",
    handler: async (_args: string, ctx: any) => {
      const color = await ctx.ui.select("Pick a color", ["red", "blue"]);
      const sure = await ctx.ui.confirm("Really?", "Are you sure?");
      const name = await ctx.ui.input("Your name", "type it");
      writeFileSync(join(ctx.cwd, "answers.json"), JSON.stringify({ color: color ?? null, sure, name: name ?? null }));
    },
  });
  pi.registerCommand("later", {
    description: "Ask after returning",
    handler: async (_args: string, ctx: any) => {
      setTimeout(async () => {
        const pick = await ctx.ui.select("Later?", ["x", "y"]);
        writeFileSync(join(ctx.cwd, "later.json"), JSON.stringify({ pick: pick ?? null }));
      }, 100);
    },
  });
}
"""


@asynccontextmanager
async def pi_session(world: World, **options: Any) -> AsyncIterator[Session]:
    """A Runtime that discovers the world's pi launcher, and one session opened natively in the work dir."""
    async with Runtime(env=world.runtime_env) as runtime:
        session = await runtime.open("pi", world.work, **options)
        validate("SessionInfo", session.info().dump())
        yield session


async def model_call(world: World, prompt: str) -> dict[str, Any]:
    """The fake LLM's logged request whose last message is `prompt` (the system prompt holds many words)."""

    def asks(request: dict[str, Any]) -> bool:
        messages = request.get("body", {}).get("messages") or [{}]
        return prompt in json.dumps(messages[-1])

    return await world.wait_for(asks)


def _read(path: str) -> str:
    return Path(path).read_text(encoding="utf-8")


def _is_file(path: str) -> bool:
    return Path(path).is_file()


def options(info: SessionInfo) -> dict[str, list[str]]:
    """Each config option's choice values."""
    return {
        o.id: [c.value for c in o.kind.choices] for o in info.details.config_options if isinstance(o.kind, SelectKind)
    }


async def test_a_tool_turn_streams_runs_bash_without_asking_and_completes(tmp_path: Path) -> None:
    """A tool call arrives as ToolUpdated snapshots (pending → running → completed, with the command and its
    output) and never as a permission ask; the model's answer streams as text deltas; `agent_end` ends the turn
    with context usage. The handshake's facts are on the session: no Permissions capability, the
    models and thinking levels as options."""
    async with agent_world("pi", tmp_path, tool_scenario("pi")) as world, pi_session(world) as session:
        details = session.info().details
        assert details.version is None  # the harness's launcher script hides the package (test_pi_translate.py)
        features = set(details.capabilities.features)
        assert Capability.PERMISSIONS not in features
        assert Capability.STEER in features and Capability.QUESTIONS in features
        assert {Capability.RESUME, Capability.FORK, Capability.COMPACT, Capability.SLASH_COMMANDS} <= features
        assert options(session.info()) == {"model": MODELS, "effort": ["off"]}
        assert session.info().configuration.options == {"model": MODELS[0], "effort": "off"}
        assert session.info().resume_token is not None and session.info().resume_token.endswith(".jsonl")

        await session.prompt("create the marker file")
        events = await until(session, is_turn_end)
        assert isinstance(turn_end(events).stop, Completed)
        assert not of(events, RequestOpened)
        tools = [update.tool for update in of(events, ToolUpdated)]
        assert tools[0].status is ToolStatus.PENDING
        assert tools[-1].status is ToolStatus.COMPLETED and tools[-1].output == "(no output)"
        assert ToolStatus.RUNNING in {tool.status for tool in tools}
        assert isinstance(tools[-1].kind, Execute)
        assert isinstance(tools[-1].input, CommandInput) and tools[-1].input.spec.command == COMMAND
        assert world.touched.exists()
        assert text_of(events) == "tool done"
        usage = of(events, ContextUsage)
        assert usage and usage[-1].window_tokens == 32000 and usage[-1].used_tokens > 0


async def test_a_plain_turn_streams_its_text_in_several_deltas(tmp_path: Path) -> None:
    """The fake LLM sends the text in pieces; each `text_delta` is one TextDelta, and the block's closing
    `text_end` (which repeats the whole text) adds nothing."""
    async with agent_world("pi", tmp_path, plain_scenario()) as world, pi_session(world) as session:
        await session.prompt("say hello")
        events = await until(session, is_turn_end)
        assert isinstance(turn_end(events).stop, Completed)
        assert len(of(events, TextDelta)) > 1
        assert text_of(events) == TEXT


async def test_cancel_mid_turn_ends_cancelled_and_the_next_prompt_completes(tmp_path: Path) -> None:
    """`abort` while the model streams: pi ends the run at once with an aborted message → `Cancelled`; the
    session then runs a normal turn."""
    async with agent_world("pi", tmp_path, slow_scenario("pi")) as world, pi_session(world) as session:
        await session.prompt("say something slowly")
        await until(session, is_text)
        await session.cancel()
        events = await until(session, is_turn_end)
        assert isinstance(turn_end(events).stop, Cancelled)
        await session.prompt("say hello")
        events = await until(session, is_turn_end)
        assert isinstance(turn_end(events).stop, Completed)
        assert text_of(events) == TEXT


async def test_a_prompt_during_a_turn_steers_it(tmp_path: Path) -> None:
    """A second prompt while the model streams is a pi `steer`: it joins the running turn (Steered), pi hands it
    to the model after the current answer, and the one turn ends with the model's reply to it."""
    async with agent_world("pi", tmp_path, slow_scenario("pi")) as world, pi_session(world) as session:
        first = await session.prompt("say something slowly")
        await until(session, is_text)
        steered = await session.prompt("steered text")
        assert isinstance(steered.kind, Steered) and steered.kind.turn_id == getattr(first.kind, "turn_id", None)
        events = await until(session, is_turn_end)
        assert isinstance(turn_end(events).stop, Completed)
        assert text_of(events).endswith(TEXT)
        await model_call(world, "steered text")


def error_scenario(status: int, message: str) -> dict[str, Any]:
    """The first main call fails with `status`; later calls answer TEXT."""
    error = {"kind": "error", "status": status, "error_type": "api_error", "message": message, "match": '"bash"'}
    return {"steps": [error], "fallback": {"kind": "reply", "text": TEXT}}


async def test_a_provider_error_fails_the_turn_and_the_session_goes_on(tmp_path: Path) -> None:
    """A refusal pi does not retry (HTTP 400) ends the run with an error message: `Failed` with pi's text; the
    next prompt completes."""
    scenario = error_scenario(400, "bad request from fake")
    async with agent_world("pi", tmp_path, scenario) as world, pi_session(world) as session:
        await session.prompt("fail please")
        stop = turn_end(await until(session, is_turn_end)).stop
        assert isinstance(stop, Failed) and "bad request from fake" in stop.message
        await session.prompt("say hello")
        events = await until(session, is_turn_end)
        assert isinstance(turn_end(events).stop, Completed) and text_of(events) == TEXT


async def test_a_reply_cut_at_the_models_output_limit_completes_the_turn_at_that_limit(tmp_path: Path) -> None:
    """Issue 33: the model's reply stops at its length limit (`finish_reason: length`); pi ends the run with
    `stopReason: "length"`, which is `Completed` at limit MaxTokens."""
    step = {"kind": "reply", "text": "cut short", "stop": "length", "match": PEERS["pi"].main_marker}
    scenario = {"steps": [ROUTER, step], "fallback": {"kind": "reply", "text": TEXT}}
    async with agent_world("pi", tmp_path, scenario) as world, pi_session(world) as session:
        await session.prompt("say something long")
        events = await until(session, is_turn_end)
        assert turn_end(events).stop == Completed(limit=StopLimit.MAX_TOKENS)
        assert text_of(events) == "cut short"


async def test_pis_own_retry_of_a_transient_error_stays_in_the_same_turn(tmp_path: Path) -> None:
    """An overloaded answer makes pi end the run (`agent_end` with an error) and retry it by itself
    (`auto_retry_start`, a new run): the turn goes on through the retry and ends once, `Completed`."""
    async with agent_world("pi", tmp_path, error_scenario(503, "overloaded")) as world:
        settings = world.home / ".pi" / "agent" / "settings.json"
        quick = {"retry": {"baseDelayMs": 50, "provider": {"maxRetries": 0}}}  # pi retries, not the HTTP client
        settings.write_text(json.dumps(json.loads(settings.read_text()) | quick), encoding="utf-8")
        async with pi_session(world) as session:
            await session.prompt("try twice")
            events = await until(session, is_turn_end)
            assert isinstance(turn_end(events).stop, Completed) and text_of(events) == TEXT
        assert len(world.requests()) == 2


async def test_resume_in_a_new_process_remembers_the_earlier_turn(tmp_path: Path) -> None:
    """The resume token is pi's session file. A new Runtime (a new pi process) opened with it continues the
    conversation: the model's next request carries the earlier prompt and answer. A token naming no file is
    `ResumeFailed`."""
    async with agent_world("pi", tmp_path, plain_scenario()) as world:
        async with pi_session(world) as session:
            await session.prompt("remember the word kumquat")
            assert isinstance(turn_end(await until(session, is_turn_end)).stop, Completed)
            token = session.info().resume_token
        assert token is not None and _is_file(token)
        async with pi_session(world, resume=token) as resumed:
            assert resumed.info().resume_token == token
            await resumed.prompt("which word?")
            assert isinstance(turn_end(await until(resumed, is_turn_end)).stop, Completed)
        request = await model_call(world, "which word?")
        body = json.dumps(request["body"])
        assert "kumquat" in body and TEXT in body
        async with Runtime(env=world.runtime_env) as runtime:
            with pytest.raises(ResumeFailed):
                await runtime.open("pi", world.work, resume=str(tmp_path / "missing.jsonl"))


async def test_fork_copies_the_session_into_a_new_file_and_leaves_the_source_alone(tmp_path: Path) -> None:
    """`fork` is pi's `--fork FILE`: a new session file (a new token) holding the conversation so far, so the
    model's next request carries it; the source file does not change. `fork_at` is `UnsupportedFeature`."""
    async with agent_world("pi", tmp_path, plain_scenario()) as world:
        async with pi_session(world) as session:
            await session.prompt("remember the word kumquat")
            await until(session, is_turn_end)
            token = session.info().resume_token
        assert token is not None
        before = _read(token)
        async with pi_session(world, fork=token) as forked:
            fork_token = forked.info().resume_token
            assert fork_token is not None and fork_token != token
            await forked.prompt("which word?")
            assert isinstance(turn_end(await until(forked, is_turn_end)).stop, Completed)
        assert "kumquat" in json.dumps((await model_call(world, "which word?"))["body"])
        assert _read(token) == before
        assert "which word?" in _read(fork_token)
        async with Runtime(env=world.runtime_env) as runtime:
            with pytest.raises(UnsupportedFeature):
                await runtime.open("pi", world.work, fork=token, fork_at="m1")


async def test_model_and_effort_are_set_at_open_and_live(tmp_path: Path) -> None:
    """`model` and `effort` come from pi's handshake. At open they become `--model` / `--thinking` and must show
    applied; live they are pi's `set_model` / `set_thinking_level`, confirmed by SessionUpdated (a model without
    reasoning has only "off", so switching to it clamps the level). The model's requests follow."""
    async with (
        agent_world("pi", tmp_path, plain_scenario()) as world,
        pi_session(world, configure={"model": MODELS[1], "effort": "high"}) as session,
    ):
        assert session.info().configuration.options == {"model": MODELS[1], "effort": "high"}
        assert options(session.info())["effort"] == ["off", "minimal", "low", "medium", "high"]
        await session.prompt("first")
        await until(session, is_turn_end)
        assert (await model_call(world, "first"))["body"]["model"] == PI_MODELS[1]

        await session.configure("model", MODELS[0])
        updated = await until(
            session,
            lambda e: isinstance(e.kind, SessionUpdated) and e.kind.info.configuration.options["model"] == MODELS[0],
        )
        info = updated[-1].kind.info if isinstance(updated[-1].kind, SessionUpdated) else None
        assert info is not None and info.configuration.options["effort"] == "off"
        assert options(info)["effort"] == ["off"]
        with pytest.raises(InvalidConfiguration):
            await session.configure("effort", "high")
        await session.prompt("second")
        await until(session, is_turn_end)
        assert (await model_call(world, "second"))["body"]["model"] == PI_MODELS[0]


async def test_extension_dialogs_become_questions_answered_back(tmp_path: Path) -> None:
    """A pi extension's `/ask` is a slash command from `get_commands`; its select, confirm and input dialogs arrive
    as Question requests (choices, yes/no, free text), our answers reach the extension, and the prompt, which
    starts no model run, ends `Completed`."""
    async with agent_world("pi", tmp_path, plain_scenario()) as world:
        extensions = world.home / ".pi" / "agent" / "extensions"
        extensions.mkdir(parents=True)
        (extensions / "ask.ts").write_text(ASK_EXTENSION, encoding="utf-8")
        async with pi_session(world) as session:
            commands = session.info().details.commands
            assert [(c.name, c.description) for c in commands] == [
                ("ask", "Ask three questions"),
                ("later", "Ask after returning"),
            ]
            await session.prompt("/ask")
            replies = [ChoicesAnswer(ids=["blue"]), ChoicesAnswer(ids=["yes"]), TextAnswer(text="Ada")]
            asked = []
            for reply in replies:
                events = await until(session, lambda e: isinstance(e.kind, RequestOpened))
                opened = events[-1].kind
                assert isinstance(opened, RequestOpened) and isinstance(opened.request, QuestionAsk)
                asked.append(opened.request.request.questions[0])
                await session.answer(opened.request.request.id, QuestionsAnswer(answers=[reply]))
            events = await until(session, is_turn_end)
            assert isinstance(turn_end(events).stop, Completed)
        assert [q.text for q in asked] == ["Pick a color", "Really?\nAre you sure?", "Your name"]
        assert [[c.id for c in q.choices] for q in asked] == [["red", "blue"], ["yes", "no"], []]
        assert [q.allows_free_text for q in asked] == [False, False, True]
        answers = json.loads((world.work / "answers.json").read_text())
        assert answers == {"color": "blue", "sure": True, "name": "Ada"}
        assert not world.requests(), "the extension command called the model"


async def test_a_dialog_pi_opens_on_its_own_is_a_turn_that_our_answer_ends(tmp_path: Path) -> None:
    """An extension may ask after its command returned. The question then belongs to a turn of its own (or to the
    command's turn, if it comes before pi answered the command); either way answering it ends that turn at once
    (`Completed` from the wire, not from the loop's quiet window) and the answer reaches the extension."""
    async with agent_world("pi", tmp_path, plain_scenario()) as world:
        extensions = world.home / ".pi" / "agent" / "extensions"
        extensions.mkdir(parents=True)
        (extensions / "ask.ts").write_text(ASK_EXTENSION, encoding="utf-8")
        async with pi_session(world) as session:
            await session.prompt("/later")
            events = await until(session, lambda e: isinstance(e.kind, RequestOpened))
            opened = events[-1].kind
            assert isinstance(opened, RequestOpened) and isinstance(opened.request, QuestionAsk)
            question = opened.request.request
            assert [c.id for c in question.questions[0].choices] == ["x", "y"]
            await session.answer(question.id, QuestionsAnswer(answers=[ChoicesAnswer(ids=["y"])]))
            stop = turn_end(await until(session, is_turn_end)).stop
            assert isinstance(stop, Completed) and stop.source is CompletionSource.PROTOCOL
        assert json.loads((world.work / "later.json").read_text()) == {"pick": "y"}


async def test_cancel_during_a_dialog_dismisses_it_and_the_rest(tmp_path: Path) -> None:
    """`cancel` while an extension's dialog is open answers it cancelled, and the dialogs the extension opens after
    it within that turn too; the turn ends `Cancelled` and the next prompt runs normally."""
    async with agent_world("pi", tmp_path, plain_scenario()) as world:
        extensions = world.home / ".pi" / "agent" / "extensions"
        extensions.mkdir(parents=True)
        (extensions / "ask.ts").write_text(ASK_EXTENSION, encoding="utf-8")
        async with pi_session(world) as session:
            await session.prompt("/ask")
            await until(session, lambda e: isinstance(e.kind, RequestOpened))
            await session.cancel()
            events = await until(session, is_turn_end)
            assert isinstance(turn_end(events).stop, Cancelled)
            assert not of(events, RequestOpened)
            await session.prompt("say hello")
            events = await until(session, is_turn_end)
            assert isinstance(turn_end(events).stop, Completed) and text_of(events) == TEXT
        answers = json.loads((world.work / "answers.json").read_text())
        assert answers == {"color": None, "sure": False, "name": None}


async def test_compact_runs_as_an_agent_turn(tmp_path: Path) -> None:
    """`compact` is pi's `compact`: an agent-originated turn with ContextCompacted, ended when pi answers."""
    async with agent_world("pi", tmp_path, plain_scenario()) as world, pi_session(world) as session:
        await session.prompt("say hello")
        await until(session, is_turn_end)
        await session.compact()
        events = await until(session, is_turn_end)
        started = of(events, TurnStarted)
        assert started and isinstance(started[0].origin, FromAgent)
        assert of(events, ContextCompacted)
        assert isinstance(turn_end(events).stop, Completed)
        assert len(world.requests()) == 2


async def test_a_pi_without_any_usable_model_fails_the_open_with_auth_required(tmp_path: Path) -> None:
    """pi 0.73.1 cannot be asked for its login state; with no provider logged in it exits "No models available",
    which `open` reports as `AuthRequired` with pi's ways in (`/login` in pi, or a provider's key variable)."""
    async with agent_world("pi", tmp_path, plain_scenario()) as world:
        (world.home / ".pi" / "agent" / "models.json").unlink()
        async with Runtime(env=world.runtime_env) as runtime:
            with pytest.raises(AuthRequired) as refused:
                await runtime.open("pi", world.work)
        validate("ErrorBody", refused.value.body().dump())
        logins = refused.value.login
        assert isinstance(logins[0], TerminalLogin) and logins[0].command == [str(world.launcher)]
        assert {m.name for m in logins if isinstance(m, EnvVarLogin)} >= {"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}


async def test_generate_runs_pi_without_tools_or_a_session_file(tmp_path: Path) -> None:
    """`generate` launches pi with `--no-tools --no-session`: the model is offered no tool, the text comes back,
    and pi leaves no session file behind."""
    async with agent_world("pi", tmp_path, plain_scenario()) as world:
        async with Runtime(env=world.runtime_env) as runtime:
            text = await runtime.generate("pi", world.work, "say hello")
        assert text == TEXT
        request = await model_call(world, "say hello")
        assert not request["body"].get("tools")
        assert not _session_files(world.home)


def _session_files(home: Path) -> list[Path]:
    return list((home / ".pi" / "agent").rglob("*.jsonl"))

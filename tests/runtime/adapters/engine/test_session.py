"""Sessions of our engine through the `Runtime`: discovery, login, resume, fork, options, refusals."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from omniagent.protocols.sidecar.agents import (
    Capability,
    EnvVarLogin,
    InstallationSource,
    McpTransport,
    SelectKind,
    Unauthenticated,
)
from omniagent.protocols.sidecar.commands import McpServer, SseMcp
from omniagent.protocols.sidecar.events import (
    Completed,
    MessageEnded,
    RequestOpened,
    SessionUpdated,
    TextDelta,
    TurnEnded,
)
from omniagent.runtime.discovery import discover
from omniagent.runtime.errors import AuthRequired, InvalidConfiguration, ResumeFailed, SpawnFailed, UnsupportedFeature
from omniagent.testing import FakeLLMServer, Reply, Scenario
from tests.runtime.adapters.engine.harness import (
    bodies,
    collect,
    of,
    one_turn,
    open_engine,
    runtime,
    tool_then_text,
    use_engine,
    workspace,
)
from tests.sidecar_schema import validate


def test_discovery_always_reports_the_engine_as_pinned(tmp_path: Path) -> None:
    """Issue "One system" part 3: `omniagent` is always installed, source Pinned, at the `omniagent` entry beside the
    running interpreter (else the interpreter), whatever PATH and HOME hold."""
    report = discover(env={"PATH": "", "HOME": str(tmp_path), "OMNIAGENT_NO_LOGIN_SHELL": "1"})
    validate("DiscoveryReport", report.dump())
    (engine,) = [agent for agent in report.agents if agent.id == "omniagent"]
    assert engine.source is InstallationSource.PINNED and engine.name == "omniagent"
    beside = Path(sys.executable).parent / "omniagent"
    assert engine.executable_path == (str(beside) if beside.exists() else sys.executable)
    assert "omniagent" not in {missing.id for missing in report.missing}


async def test_without_a_key_open_needs_a_login_naming_the_key_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue: no provider with a credential → AuthRequired with EnvVar login methods; probe reports it as a
    result (Unauthenticated), never as a failure."""
    use_engine(monkeypatch, tmp_path, None)
    async with runtime() as rt:
        with pytest.raises(AuthRequired) as raised:
            await rt.open("omniagent", workspace(tmp_path))
        details = await rt.probe("omniagent")
    expected = [EnvVarLogin(name=n) for n in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY")]
    assert raised.value.login == expected
    assert details.auth == Unauthenticated(login=expected)


async def test_capabilities_and_options_come_from_the_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue: real capabilities (Resume, Permissions, Questions (`ask_user`), Rollback and RollbackFiles
    (`session.rewind` with file checkpoints), Fork, Compact now that the engine serves session.compact, Subagents
    (child sessions), ContextUsage; no Images while it refuses media) and options model (ready providers' models),
    reasoning, mode."""
    async with FakeLLMServer(Scenario()) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            info = (await open_engine(rt, workspace(tmp_path))).info()
    features = info.details.capabilities.features
    expected = [
        Capability.RESUME,
        Capability.PERMISSIONS,
        Capability.QUESTIONS,
        Capability.ROLLBACK,
        Capability.ROLLBACK_FILES,
        Capability.FORK,
        Capability.COMPACT,
        Capability.PLAN,
        Capability.SUBAGENTS,
        Capability.CONTEXT_USAGE,
    ]
    assert features == expected
    options = {option.id: option for option in info.details.config_options}
    assert list(options) == ["model", "reasoning", "mode", "sandbox", "network", "fetch"]
    model = options["model"].kind
    assert isinstance(model, SelectKind)
    assert {c.value.partition("/")[0] for c in model.choices} == {"anthropic"}  # only the provider with a key
    assert info.configuration.options == {
        "model": "anthropic/claude-sonnet-4-5",
        "reasoning": "medium",
        "mode": "ask",
        "sandbox": "sandboxed",
        "network": "off",
        "fetch": "public",
    }
    assert info.resume_token is not None and len(info.resume_token) == 32


async def test_creation_options_pick_the_model_and_the_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Creation-time options: the model goes to the provider; mode `auto` runs writes unasked."""
    ws = workspace(tmp_path)
    async with FakeLLMServer(tool_then_text()) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            configure = {"model": "anthropic/claude-haiku-4-5", "mode": "auto"}
            session = await open_engine(rt, ws, configure=configure)
            assert session.info().configuration.options["model"] == "anthropic/claude-haiku-4-5"
            await session.prompt("write it")
            events = await one_turn(session)
            with pytest.raises(InvalidConfiguration):
                await rt.open("omniagent", ws, configure={"model": "anthropic/no-such-model"})
        first = (await bodies(llm, 1))[0]
    assert first["model"] == "claude-haiku-4-5"
    assert of(events, RequestOpened) == [] and (ws / "hello.txt").exists()
    assert of(events, TurnEnded)[-1].stop == Completed()


async def test_sandbox_and_network_are_options_at_creation_and_refuse_unknown_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 9 part 1: the engine's exec sandbox settings are options here as on its other wires."""
    async with FakeLLMServer(Scenario()) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            configure = {"sandbox": "unsandboxed", "network": "on", "fetch": "private"}
            session = await open_engine(rt, workspace(tmp_path), configure=configure)
            options = session.info().configuration.options
            assert (options["sandbox"], options["network"], options["fetch"]) == ("unsandboxed", "on", "private")
            for option in ("sandbox", "network", "fetch"):
                with pytest.raises(InvalidConfiguration):
                    await rt.open("omniagent", workspace(tmp_path), configure={option: "maybe"})
            listed = await open_engine(rt, workspace(tmp_path), configure={"network": "allowlist"})
            assert listed.info().configuration.options["network"] == "allowlist"


async def test_configure_patches_the_session_and_announces_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue: Configure model/reasoning → session.patch, then InfoChanged (a SessionUpdated with the new current);
    the next turn uses them."""
    async with FakeLLMServer(Scenario([Reply(text="ok")])) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, workspace(tmp_path))
            await session.configure("model", "anthropic/claude-opus-4-1")
            updated = await collect(session, lambda e: isinstance(e.kind, SessionUpdated))
            await session.configure("reasoning", "high")
            await collect(session, lambda e: isinstance(e.kind, SessionUpdated))
            assert session.info().configuration.options["reasoning"] == "high"
            await session.prompt("hi")
            await one_turn(session)
        body = (await bodies(llm, 1))[0]
    info = of(updated, SessionUpdated)[-1].info
    assert info.configuration.options["model"] == "anthropic/claude-opus-4-1"
    assert body["model"] == "claude-opus-4-1" and body["thinking"]["type"] == "enabled"


async def test_resume_by_token_continues_the_conversation_in_a_new_runtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue: resume by session id = resume token; the engine's durable store carries the transcript across
    runtimes (the shared engine closed with the first one). An unknown token is ResumeFailed."""
    ws = workspace(tmp_path)
    async with FakeLLMServer(Scenario([Reply(text="first answer"), Reply(text="second answer")])) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws)
            await session.prompt("remember the word kumquat")
            await one_turn(session)
            token = session.info().resume_token
        assert token is not None
        async with runtime() as rt:
            resumed = await open_engine(rt, ws, resume=token)
            assert resumed.info().resume_token == token
            assert resumed.info().title == "remember the word kumquat"
            await resumed.prompt("which word?")
            events = await one_turn(resumed)
            with pytest.raises(ResumeFailed):
                await rt.open("omniagent", ws, resume="0" * 32)
        second = (await bodies(llm, 2))[1]
    assert "".join(t.text for t in of(events, TextDelta)) == "second answer"
    assert "kumquat" in str(second["messages"][0]) and "first answer" in str(second["messages"][1])


async def test_fork_by_token_opens_a_session_with_the_earlier_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue "One system": the engine serves session.fork, so the adapter advertises Fork and `open(fork=token)`
    makes a new session (own resume token) that continues the conversation; `fork_at` = a MessageEnded id (its
    `omniagent/fork_point`) keeps that message and what came before; the source stays as it was. An unknown
    token or point is ResumeFailed (a bad token)."""
    ws = workspace(tmp_path)
    scenario = Scenario([Reply(text="kumquat noted"), Reply(text="plum noted")], fallback=Reply(text="answer"))
    async with FakeLLMServer(scenario) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            source = await open_engine(rt, ws)
            assert Capability.FORK in source.info().details.capabilities.features
            await source.prompt("remember the word kumquat")
            first = await one_turn(source)
            await source.prompt("now remember plum")
            await one_turn(source)
            ended = next(e for e in first if isinstance(e.kind, MessageEnded))
            point = ended.extensions["omniagent/fork_point"]
            assert isinstance(ended.kind, MessageEnded) and point == ended.kind.message_id == "m2"
            token = source.info().resume_token
            assert token is not None

            whole = await open_engine(rt, ws, fork=token)
            assert whole.info().resume_token not in (None, token)
            assert Capability.FORK in whole.info().details.capabilities.features
            assert whole.info().title == "remember the word kumquat"
            await whole.prompt("which words?")
            await one_turn(whole)
            at = await open_engine(rt, ws, fork=token, fork_at=point, configure={"reasoning": "high"})
            assert at.info().configuration.options["reasoning"] == "high"  # patched onto the fork
            with pytest.raises(InvalidConfiguration):
                await rt.open("omniagent", ws, fork=token, configure={"reasoning": "ultra"})
            await at.prompt("which word?")
            await one_turn(at)
            for bad_token, bad_point in (("0" * 32, None), (token, "m99"), (token, "x")):
                with pytest.raises(ResumeFailed):
                    await rt.open("omniagent", ws, fork=bad_token, fork_at=bad_point)
            await source.prompt("and the source?")
            await one_turn(source)
        sent = [str(body["messages"]) for body in await bodies(llm, 5)]
    assert "kumquat" in sent[2] and "plum noted" in sent[2] and "which words?" in sent[2]
    assert "kumquat noted" in sent[3] and "plum" not in sent[3] and "which word?" in sent[3]
    assert "which word" not in sent[4] and "and the source?" in sent[4]


async def test_the_engine_speaks_stdio_and_http_mcp_servers_and_refuses_sse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine advertises the MCP transports its client speaks; an SSE server is UnsupportedFeature
    (docs/agents.md)."""
    async with FakeLLMServer(Scenario()) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            sse = McpServer(name="x", connection=SseMcp(url="http://127.0.0.1:1/sse", headers={}))
            with pytest.raises(UnsupportedFeature):
                await rt.open("omniagent", workspace(tmp_path), mcp_servers=[sse])
            info = (await open_engine(rt, workspace(tmp_path))).info()
            assert info.details.capabilities.mcp_transports == [McpTransport.STDIO, McpTransport.HTTP]


async def test_two_sessions_share_one_engine_and_run_side_by_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/architecture.md: one engine per event loop, shared by every engine session (one store, one recovery)."""
    async with FakeLLMServer(Scenario([Reply(text="same")], fallback=Reply(text="same"))) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            first = await open_engine(rt, workspace(tmp_path))
            second = await open_engine(rt, workspace(tmp_path))
            await first.prompt("a")
            await second.prompt("b")
            ends = [of(await one_turn(s), TurnEnded)[-1].stop for s in (first, second)]
    assert ends == [Completed(), Completed()]
    assert first.info().resume_token != second.info().resume_token


async def test_a_session_closed_without_a_prompt_leaves_nothing_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Our choice (docs/agents.md): an engine session this open created and nobody prompted (a probe, an open then
    close) is removed at close, so probes do not pile up in the engine's session list."""
    async with FakeLLMServer(Scenario()) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            details = await rt.probe("omniagent")
            session = await open_engine(rt, workspace(tmp_path))
            token = session.info().resume_token
            await session.close()
            with pytest.raises(ResumeFailed):
                await rt.open("omniagent", workspace(tmp_path), resume=token)
    assert Capability.PERMISSIONS in details.capabilities.features


async def test_an_engine_that_cannot_open_its_store_is_spawn_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SpawnFailed: the engine could not start (here its data dir is a file); the next open tries again."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    use_engine(monkeypatch, tmp_path, None)
    monkeypatch.setenv("OMNIAGENT_DATA_DIR", str(blocker))
    async with runtime() as rt:
        with pytest.raises(SpawnFailed) as raised:
            await rt.open("omniagent", workspace(tmp_path))
        assert "the engine could not start" in str(raised.value)
        monkeypatch.setenv("OMNIAGENT_DATA_DIR", str(tmp_path / "data"))
        with pytest.raises(AuthRequired):  # started this time; it only lacks a key
            await rt.open("omniagent", workspace(tmp_path))

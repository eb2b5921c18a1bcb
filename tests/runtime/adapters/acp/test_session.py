"""The ACP adapter's sessions through `Runtime` + `Session` against the fake ACP agent subprocess, v1 and v2:
details from `initialize`, login, config options, session-level updates, MCP, resume and fork, the inline agent
and the catalog's launch lines (docs/agents.md "ACP agents")."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from omniagent.protocols.sidecar.agents import (
    AgentInstallation,
    Capability,
    EnvVarLogin,
    InstallationSource,
    McpTransport,
    TerminalLogin,
)
from omniagent.protocols.sidecar.base import DiagnosticLevel, convert
from omniagent.protocols.sidecar.commands import AcpSpec, Command, HttpMcp, InlineAcp, McpServer, Open, StdioMcp
from omniagent.protocols.sidecar.events import (
    ContextUsage,
    DiagnosticEvent,
    PlanStatus,
    PlanUpdated,
    SessionUpdated,
    TextDelta,
    TurnEnded,
    TurnStarted,
    UserMessage,
)
from omniagent.runtime.adapters import adapter_for
from omniagent.runtime.adapters.acp.adapter import AcpAdapter
from omniagent.runtime.adapters.acp.launch import launch_argv
from omniagent.runtime.adapters.acp.translate import DEFAULT_MESSAGE_ID, RAW_UPDATE
from omniagent.runtime.errors import (
    AuthRequired,
    InvalidConfiguration,
    ProtocolFailed,
    SpawnFailed,
    UnsupportedFeature,
)
from omniagent.runtime.runtime import Runtime
from tests.runtime.adapters.acp.harness import (
    AGENT,
    TIMING,
    WAIT,
    acp_session,
    collect,
    fake_agent,
    is_kind,
    of,
    one_turn,
    texts,
)
from tests.sidecar_schema import validate

VERSIONS = pytest.mark.parametrize("version", [1, 2])


@VERSIONS
async def test_details_come_from_what_the_agent_advertises(tmp_path: Path, version: int) -> None:
    """Always Permissions, Plan, SlashCommands; Resume if the agent can load/resume; version from
    agentInfo/info; the session id is the resume token; prompted turns end deterministically, agent turns don't."""
    async with acp_session(tmp_path, version) as (_, session):
        info = session.info()
        assert info.details.version == f"{version}.0"
        assert info.details.capabilities.features == [
            Capability.RESUME,
            Capability.PERMISSIONS,
            Capability.SLASH_COMMANDS,
            Capability.PLAN,
        ]
        assert info.details.capabilities.mcp_transports == [McpTransport.STDIO]
        assert info.resume_token == "s1"
        assert info.agent.acp_args is not None and info.agent.id == "fake"


@VERSIONS
async def test_an_agent_wanting_login_is_auth_required_with_its_terminal_login(tmp_path: Path, version: int) -> None:
    """-32000 on session/new → AuthRequired with the terminal auth methods as `[exe, …args]` + env
    (v1 in qwen's `_meta` shape, v2 as `type: "terminal"`)."""
    async with asyncio.timeout(WAIT), Runtime(timing=TIMING) as runtime:
        with pytest.raises(AuthRequired) as caught:
            await runtime.open(fake_agent(version, "--auth-required"), tmp_path)
    validate("ErrorBody", caught.value.body().dump())
    env = {"FAKE_LOGIN": "1"} if version == 2 else {}
    assert caught.value.login == [
        TerminalLogin(command=[sys.executable, "--login"], env=env, description="Log in to fake")
    ]


@VERSIONS
async def test_setting_a_config_option_confirms_with_session_updated(tmp_path: Path, version: int) -> None:
    """Configure → `session/set_config_option` → SessionUpdated with the new value."""
    async with acp_session(tmp_path, version, "--options") as (_, session):
        options = {option.id: option for option in session.info().details.config_options}
        assert options["model"].current == "fast" and options["model"].category == "model"
        assert options["fast"].current is False
        await session.configure("model", "smart")
        updated = of(await collect(session, is_kind(SessionUpdated)), SessionUpdated)[-1]
        assert updated.info.configuration.options["model"] == "smart"
        await session.configure("fast", True)
        updated = of(await collect(session, is_kind(SessionUpdated)), SessionUpdated)[-1]
        assert updated.info.configuration.options["fast"] is True
        assert session.info().configuration.options["model"] == "smart"


async def test_a_v1_mode_is_the_mode_option_and_set_through_set_mode(tmp_path: Path) -> None:
    """v1 `modes` → option `mode` (live, category mode) set by `session/set_mode`; the agent's
    current_mode_update confirms it."""
    async with acp_session(tmp_path, 1, "--options") as (_, session):
        mode = session.info().details.config_options[0]
        assert (mode.id, mode.category, mode.current, mode.live) == ("mode", "mode", "default", True)
        await session.configure("mode", "plan")
        updated = of(await collect(session, is_kind(SessionUpdated)), SessionUpdated)[-1]
        assert updated.info.configuration.options["mode"] == "plan"


@VERSIONS
async def test_an_agent_refusing_configure_is_a_warning_not_an_error(tmp_path: Path, version: int) -> None:
    """Agent refusal = Warning Diagnostic "agent rejected configure `id`: …"; the value stays."""
    async with acp_session(tmp_path, version, "--options") as (_, session):
        await session.configure("model", "broken")
        warning = of(await collect(session, is_kind(DiagnosticEvent)), DiagnosticEvent)[-1].diagnostic
        assert warning.level is DiagnosticLevel.WARNING
        assert warning.message.startswith("agent rejected configure `model`")
        assert session.info().configuration.options["model"] == "fast"


@VERSIONS
async def test_creation_time_options_are_applied_and_a_refusal_is_invalid_configuration(
    tmp_path: Path, version: int
) -> None:
    """Creation-time refusal → InvalidConfiguration("agent rejected `id`: msg")."""
    async with acp_session(tmp_path, version, "--options", configure={"model": "smart"}) as (runtime, session):
        assert session.info().configuration.options["model"] == "smart"
        with pytest.raises(InvalidConfiguration) as caught:
            await runtime.open(fake_agent(version, "--options"), tmp_path, configure={"model": "broken"})
        assert caught.value.detail.startswith("agent rejected `model`")
        with pytest.raises(InvalidConfiguration):
            await runtime.open(fake_agent(version, "--options"), tmp_path, configure={"nope": True})


@VERSIONS
async def test_plans_usage_titles_and_commands_reach_the_session(tmp_path: Path, version: int) -> None:
    """`plan` → PlanUpdated; usage_update → ContextUsage advertised (SessionUpdated) then
    ContextUsage; session_info_update → title; available_commands_update → commands; an unknown kind → Info
    Diagnostic carrying `acp/raw_update`."""
    async with acp_session(tmp_path, version) as (_, session):
        await session.prompt("extras")
        events = await one_turn(session)
        info = session.info()
    plan = of(events, PlanUpdated)[0]
    assert [(e.text, e.status) for e in plan.entries] == [
        ("look", PlanStatus.COMPLETED),
        ("fix", PlanStatus.IN_PROGRESS),
    ]
    usage_at = next(i for i, e in enumerate(events) if isinstance(e.kind, ContextUsage))
    assert Capability.CONTEXT_USAGE in of(events[:usage_at], SessionUpdated)[-1].info.details.capabilities.features
    assert of(events, ContextUsage)[0] == ContextUsage(used_tokens=10, window_tokens=100, cost_usd=0.5)
    assert info.title == "Fake title"
    assert [(c.name, c.input_hint) for c in info.details.commands] == [("review", "what to review")]
    raw = [e for e in events if isinstance(e.kind, DiagnosticEvent) and RAW_UPDATE in e.extensions]
    assert [e.extensions[RAW_UPDATE]["sessionUpdate"] for e in raw] == ["_fake/custom"]
    assert isinstance(raw[0].kind, DiagnosticEvent) and raw[0].kind.diagnostic.level is DiagnosticLevel.INFO


@VERSIONS
async def test_mcp_servers_are_forwarded_and_unadvertised_transports_refused(tmp_path: Path, version: int) -> None:
    """Stdio servers always go through; a transport the agent did not advertise →
    UnsupportedFeature("Http MCP servers")."""
    log = tmp_path / "wire.jsonl"
    stdio = McpServer(name="tools", connection=StdioMcp(command="/bin/tools", args=["-v"], env={"K": "V"}))
    http = McpServer(name="web", connection=HttpMcp(url="http://127.0.0.1:1/mcp", headers={}))
    async with acp_session(tmp_path, version, "--log", str(log), mcp_servers=[stdio]) as (runtime, _):
        with pytest.raises(UnsupportedFeature) as caught:
            await runtime.open(fake_agent(version), tmp_path, mcp_servers=[http])
        assert caught.value.detail == "Http MCP servers"
    sent = [json.loads(line) for line in log.read_text().splitlines()]
    new = next(m for m in sent if m.get("method") == "session/new")
    server = new["params"]["mcpServers"][0]
    assert (server["name"], server["command"], server["args"]) == ("tools", "/bin/tools", ["-v"])
    assert server["env"] == [{"name": "K", "value": "V"}]


@VERSIONS
async def test_resume_reopens_the_session_without_replaying_history(tmp_path: Path, version: int) -> None:
    """Resume → `session/load` (v1) / `session/resume` (v2); the load's history replay is not
    re-emitted as events (our choice: the caller already saw it)."""
    async with acp_session(tmp_path, version, resume="s9") as (_, session):
        assert session.info().resume_token == "s9"
        await session.prompt("hello")
        events = await one_turn(session)
    assert not of(events, UserMessage) and texts(events) == "Hello"
    assert events[0].turn_info is not None


@VERSIONS
async def test_resume_with_history_tells_the_loads_replay_as_the_sessions_history(tmp_path: Path, version: int) -> None:
    """With the open option `history`, the load's replay (v1 `session/load`, v2 `session/resume` from the start) is
    the session's history: its user message and answer, outside any turn, before the first turn."""
    async with acp_session(tmp_path, version, resume="s9", history=True) as (_, session):
        await session.prompt("hello")
        events = await one_turn(session)
    started = next(i for i, e in enumerate(events) if isinstance(e.kind, TurnStarted))
    told = [(e.sequence, e.turn_info, e.kind) for e in events[:started] if isinstance(e.kind, UserMessage | TextDelta)]
    user_id = "u0" if version == 2 else DEFAULT_MESSAGE_ID  # a v1 chunk names no message
    assert told == [
        (1, None, UserMessage(message_id=user_id, text="old")),
        (2, None, TextDelta(message_id="a0", text="old answer")),
    ]
    assert texts(events[started:]) == "Hello" and not of(events[started:], UserMessage)


@VERSIONS
async def test_fork_is_unsupported_unless_advertised(tmp_path: Path, version: int) -> None:
    """Fork → UnsupportedFeature("fork (no ACP agent advertises it)")."""
    async with asyncio.timeout(WAIT), Runtime(timing=TIMING) as runtime:
        with pytest.raises(UnsupportedFeature) as caught:
            await runtime.open(fake_agent(version), tmp_path, fork="s1")
    assert caught.value.detail == "fork (no ACP agent advertises it)"


async def test_an_inline_acp_agent_from_the_sidecar_open_command_runs_a_turn(tmp_path: Path) -> None:
    """`{"acp":{name,path,args}}` names an agent outside the catalog; it is driven by the ACP adapter."""
    frame = {
        "id": 1,
        "cmd": "open",
        "agent": {"acp": {"name": "my-agent", "path": sys.executable, "args": [str(AGENT), "--max-version", "1"]}},
        "dir": str(tmp_path),
    }
    command = convert(frame, Command)
    assert isinstance(command, Open)
    async with asyncio.timeout(WAIT), Runtime(timing=TIMING) as runtime:
        session = await runtime.open(command.agent, command.dir)
        assert session.info().agent.id == "my-agent"
        validate("SessionInfo", session.info().dump())
        await session.prompt("hello")
        events = await one_turn(session)
        await session.close()
    assert texts(events) == "Hello" and of(events, TextDelta)
    assert of(events, TurnEnded)


@pytest.mark.parametrize(
    ("agent", "args"),
    [
        ("gemini", ["--acp"]),
        ("qwen", ["--acp"]),
        ("opencode-acp", ["acp"]),
        ("claude-code-acp", []),
        ("codex-acp", []),
        ("hermes", ["acp"]),
        ("kiro", ["acp"]),
        ("grok", ["--no-auto-update", "agent", "--no-leader", "stdio"]),
    ],
)
def test_catalog_acp_agents_launch_with_their_verified_args(agent: str, args: list[str]) -> None:
    """Each ACP row's launch line; catalog ACP rows get the ACP adapter."""
    installation = AgentInstallation(id=agent, name=agent, executable_path="/bin/x", source=InstallationSource.PATH)
    assert launch_argv(installation) == ["/bin/x", *args]
    assert isinstance(adapter_for(installation), AcpAdapter)


def test_an_inline_agent_gets_the_acp_adapter_whatever_its_name() -> None:
    """An inline agent is ACP even when its name is a catalog id of another wire."""
    installation = AgentInstallation(
        id="claude", name="claude", executable_path="/bin/x", source=InstallationSource.PINNED, acp_args=["--a"]
    )
    assert isinstance(adapter_for(installation), AcpAdapter)
    assert launch_argv(installation) == ["/bin/x", "--a"]


def test_env_var_auth_methods_become_env_var_logins() -> None:
    """Login methods: env_var auth methods (codex-acp's shape) name their variables."""
    from omniagent.runtime.adapters.acp.info import login_methods

    methods = [{"type": "env_var", "id": "k", "name": "Key", "vars": [{"name": "CODEX_API_KEY"}]}, {"id": "agent"}]
    assert login_methods(methods, "/bin/x") == [EnvVarLogin(name="CODEX_API_KEY")]


async def test_an_agent_exiting_during_the_handshake_is_a_protocol_failure_with_its_stderr(tmp_path: Path) -> None:
    """The last stderr lines are appended to handshake failures (a logged-out CLI's complaint)."""
    script = "import sys; print('please log in first', file=sys.stderr); sys.exit(3)"
    agent = InlineAcp(acp=AcpSpec(name="quitter", path=sys.executable, args=["-c", script]))
    async with asyncio.timeout(WAIT), Runtime(timing=TIMING) as runtime:
        with pytest.raises(ProtocolFailed) as caught:
            await runtime.open(agent, tmp_path)
    assert "exit status: 3" in caught.value.detail
    assert caught.value.detail.endswith("please log in first")


async def test_a_missing_executable_is_spawn_failed(tmp_path: Path) -> None:
    """Adapter seam: `connect` raises SpawnFailed when the agent cannot be started."""
    agent = InlineAcp(acp=AcpSpec(name="ghost", path=str(tmp_path / "no-such-agent"), args=[]))
    async with asyncio.timeout(WAIT), Runtime(timing=TIMING) as runtime:
        with pytest.raises(SpawnFailed):
            await runtime.open(agent, tmp_path)

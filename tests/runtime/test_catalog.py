"""The agent catalog as data: the rows the issue names, their overrides, launch args and login methods."""

from __future__ import annotations

from omniagent.protocols.sidecar.agents import EnvVarLogin, TerminalLogin
from omniagent.protocols.sidecar.base import dump
from omniagent.runtime.catalog import PROFILES, ConnectionKind, login_methods, profile
from tests.sidecar_schema import validate

ISSUE_IDS = {
    "omniagent",
    "claude",
    "codex",
    "gemini",
    "qwen",
    "opencode",
    "opencode-acp",
    "claude-code-acp",
    "codex-acp",
    "pi",
    "hermes",
    "kiro",
    "grok",
}


def test_catalog_holds_exactly_the_agents_the_issue_names_once_each() -> None:
    """Issue "Runtime core" part 6: claude, codex, gemini, qwen, opencode, claude-code-acp, codex-acp, pi, hermes,
    kiro, grok; issue "One system" part 3: omniagent, our engine; issue 8 part 4: opencode-acp, opencode's ACP face
    once `opencode` drives its HTTP face."""
    ids = [row.id for row in PROFILES]
    assert len(ids) == len(set(ids))
    assert set(ids) == ISSUE_IDS


def test_every_agent_has_both_override_variables_omniagent_first() -> None:
    """Issue: the override is OMNIAGENT_<ID>_BIN, and anyagent's ANYAGENT_<ID>_BIN is honoured too."""
    claude, claude_code_acp = profile("claude"), profile("claude-code-acp")
    assert claude is not None and claude_code_acp is not None
    assert claude.env_overrides == ("OMNIAGENT_CLAUDE_BIN", "ANYAGENT_CLAUDE_BIN")
    assert claude_code_acp.env_overrides == ("OMNIAGENT_CLAUDE_CODE_ACP_BIN", "ANYAGENT_CLAUDE_CODE_ACP_BIN")
    for row in PROFILES:
        assert len(row.env_overrides) == 2
        assert row.env_overrides[0].startswith("OMNIAGENT_") and row.env_overrides[1].startswith("ANYAGENT_")


def test_acp_agents_launch_with_the_arguments_verified_in_real_agents() -> None:
    """gemini --acp, qwen --acp, opencode acp, claude-code-acp and codex-acp bare (each run offline); anyagent's
    catalog for grok, hermes and kiro."""
    expected = {
        "gemini": ("gemini", ("--acp",)),
        "qwen": ("qwen", ("--acp",)),
        "opencode-acp": ("opencode", ("acp",)),
        "claude-code-acp": ("claude-code-acp", ()),
        "codex-acp": ("codex-acp", ()),
        "grok": ("grok", ("--no-auto-update", "agent", "--no-leader", "stdio")),
        "hermes": ("hermes", ("acp",)),
        "kiro": ("kiro-cli", ("acp",)),
    }
    for agent_id, (cli, args) in expected.items():
        row = profile(agent_id)
        assert row is not None
        assert (row.cli, row.launch_args, row.connection) == (cli, args, ConnectionKind.ACP)


def test_native_agents_use_their_own_connection_kind() -> None:
    """claude stream-json, codex app-server, pi --mode rpc, opencode serve (the
    same CLI as the `opencode-acp` row, which keeps its ACP face selectable)."""
    claude, codex, pi, opencode = profile("claude"), profile("codex"), profile("pi"), profile("opencode")
    assert claude is not None and codex is not None and pi is not None and opencode is not None
    assert (opencode.cli, opencode.connection, opencode.launch_args) == (
        "opencode",
        ConnectionKind.OPENCODE,
        ("serve",),
    )
    assert claude.connection is ConnectionKind.CLAUDE
    assert claude.launch_args[:5] == ("-p", "--output-format", "stream-json", "--input-format", "stream-json")
    assert (codex.connection, codex.launch_args) == (ConnectionKind.CODEX, ("app-server",))
    assert (pi.connection, pi.launch_args) == (ConnectionKind.PI, ("--mode", "rpc"))


def test_every_row_has_an_install_hint_and_only_the_omniagent_row_is_the_in_process_engine() -> None:
    """MissingAgent carries an install hint; issue "One system" part 3: the engine is the `omniagent`
    row, driven in process."""
    for row in PROFILES:
        assert row.install_hint.strip()
        assert row.cli and "/" not in row.cli
        assert (row.connection is ConnectionKind.ENGINE) == (row.id == "omniagent")


def test_unknown_id_has_no_profile() -> None:
    """Our choice: lookup by id returns None for ids outside the catalog (inline ACP agents)."""
    assert profile("cursor") is None


def test_login_methods_are_the_login_command_then_one_env_var_per_api_key() -> None:
    """LoginMethod: Terminal [exe, …login args] with "Run `…` in a terminal", then EnvVar per key."""
    claude = profile("claude")
    assert claude is not None
    methods = login_methods(claude, "/opt/bin/claude")
    assert methods == [
        TerminalLogin(
            command=["/opt/bin/claude", "auth", "login"],
            env={},
            description="Run `/opt/bin/claude auth login` in a terminal",
        ),
        EnvVarLogin(name="ANTHROPIC_API_KEY"),
    ]
    encoded = [dump(method) for method in methods]
    assert encoded[1] == {"EnvVar": {"name": "ANTHROPIC_API_KEY"}}
    for value in encoded:
        validate("LoginMethod", value)


def test_agent_without_login_command_or_key_has_no_login_method() -> None:
    """anyagent catalog: qwen logs in through its ACP auth methods only."""
    qwen = profile("qwen")
    assert qwen is not None
    assert login_methods(qwen, "qwen") == []

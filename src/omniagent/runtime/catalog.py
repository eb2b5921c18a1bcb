"""The agent catalog: per-agent facts as data, one `AgentProfile` row per agent CLI we know how to find and drive.

Discovery reads the CLI name, env overrides and search extras; the runtime reads the connection kind and launch
args to pick and start an adapter; `MissingAgent` shows the install hint; an `Unauthenticated` answer lists the
login methods built from the login args and API-key variables. Adding an ACP agent is a new row here and nothing
else. Rows record what was verified and where; a flag nobody has seen work does not ship.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from omniagent.protocols.sidecar.agents import EnvVarLogin, LoginMethod, TerminalLogin


class ConnectionKind(StrEnum):
    """Which adapter drives the agent, i.e. which wire its CLI speaks in protocol mode."""

    ACP = "acp"  # Agent Client Protocol v1 over stdio; one adapter for every ACP agent
    CLAUDE = "claude"  # Claude Code stream-json
    CODEX = "codex"  # codex app-server JSON-RPC (no "jsonrpc" member)
    OPENCODE = "opencode"  # opencode's own HTTP + SSE server (`opencode serve`)
    PI = "pi"  # pi's JSONL RPC
    ENGINE = "engine"  # our own engine, driven in process (the `omniagent` row; discovery always reports it)


@dataclass(frozen=True, slots=True)
class AgentProfile:
    """Everything discovery and the runtime need to know about one agent CLI."""

    id: str
    """Catalog id on the wire (`"claude"`, `"codex-acp"`)."""
    name: str
    """Display name."""
    cli: str
    """Executable file name searched for in every directory."""
    connection: ConnectionKind
    launch_args: tuple[str, ...]
    """Arguments after the executable that put the CLI in its protocol mode."""
    install_hint: str
    """Shown in `MissingAgent` when the CLI is not found."""
    login_args: tuple[str, ...] = ()
    """Arguments after the executable that start the CLI's own login flow; empty when it has none."""
    api_key_env: tuple[str, ...] = ()
    """Environment variables holding an API key the CLI accepts instead of a login."""
    extra_dirs: tuple[str, ...] = ()
    """Known install directories searched last, relative to `$HOME` unless absolute."""
    env_overrides: tuple[str, ...] = field(default=())
    """Variables naming the executable, first wins. Filled from `id` when left empty."""

    def __post_init__(self) -> None:
        if not self.env_overrides:
            object.__setattr__(self, "env_overrides", env_override_names(self.id))


def env_override_names(agent_id: str) -> tuple[str, ...]:
    """`OMNIAGENT_<ID>_BIN`, then anyagent's `ANYAGENT_<ID>_BIN` so existing setups carry over."""
    stem = agent_id.upper().replace("-", "_")
    return (f"OMNIAGENT_{stem}_BIN", f"ANYAGENT_{stem}_BIN")


# Rows are in display order: the native CLIs first, then ACP agents with a full turn observed, then the ones known
# only from anyagent's catalog. "Full turn" rows were run offline against the fake LLM (docs/testing.md, "Real
# agents", has the tested versions); "anyagent" is the anyagent-rs catalog.
ENGINE_ID = "omniagent"  # the catalog id of our engine's row

PROFILES: tuple[AgentProfile, ...] = (
    # Our own engine (docs/architecture.md, "The engine as an agent"): driven in process, so never searched for;
    # discovery reports it installed, source Pinned, at the `omniagent` entry beside the running interpreter.
    AgentProfile(
        id=ENGINE_ID,
        name="omniagent",
        cli="omniagent",
        connection=ConnectionKind.ENGINE,
        launch_args=(),
        install_hint="part of omniagent itself (always installed)",
        api_key_env=("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"),
    ),
    # A full turn observed with claude 2.1.197 over these flags; anyagent adds the last two
    # (partial messages, replayed user messages) and its adapter relies on them.
    AgentProfile(
        id="claude",
        name="Claude Code",
        cli="claude",
        connection=ConnectionKind.CLAUDE,
        launch_args=(
            "-p",
            "--output-format",
            "stream-json",
            "--input-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
            "--permission-prompt-tool",
            "stdio",
            "--replay-user-messages",
        ),
        install_hint="npm install -g @anthropic-ai/claude-code",
        login_args=("auth", "login"),
        api_key_env=("ANTHROPIC_API_KEY",),
        # The native installer puts claude in ~/.claude/local or ~/.local/bin (anyagent).
        extra_dirs=(".claude/local", ".local/bin"),
    ),
    # Full turn with codex 0.171.0 as `codex app-server`. app-server ignores OPENAI_API_KEY,
    # but the CLI's own `codex login --with-api-key` path reads it, so it stays a login method.
    AgentProfile(
        id="codex",
        name="Codex",
        cli="codex",
        connection=ConnectionKind.CODEX,
        launch_args=("app-server",),
        install_hint="npm install -g @openai/codex",
        login_args=("login",),
        api_key_env=("OPENAI_API_KEY",),
    ),
    # Full ACP turn with @google/gemini-cli 0.61.0 via `--acp` (`--experimental-acp` is
    # deprecated). Gemini has no login subcommand: it logs in interactively or reads GEMINI_API_KEY.
    AgentProfile(
        id="gemini",
        name="Gemini CLI",
        cli="gemini",
        connection=ConnectionKind.ACP,
        launch_args=("--acp",),
        install_hint="npm install -g @google/gemini-cli",
        api_key_env=("GEMINI_API_KEY",),
    ),
    # Full ACP turn with @qwen-code/qwen-code 0.15.10 via `--acp`; that version has no
    # `--experimental-acp` (anyagent's older flag). Its login arrives at runtime as a terminal authMethod.
    AgentProfile(
        id="qwen",
        name="Qwen Code",
        cli="qwen",
        connection=ConnectionKind.ACP,
        launch_args=("--acp",),
        install_hint="npm install -g @qwen-code/qwen-code",
    ),
    # Verified with opencode-ai 1.18.33: `opencode serve` on 127.0.0.1, HTTP Basic with a fresh
    # password per session, SSE `/event`. Chosen over the ACP face (row `opencode-acp`) because only this face has
    # rollback, fork and compact. The adapter builds the full command line; `serve` here names the mode.
    AgentProfile(
        id="opencode",
        name="opencode",
        cli="opencode",
        connection=ConnectionKind.OPENCODE,
        launch_args=("serve",),
        install_hint="npm install -g opencode-ai (or brew install sst/tap/opencode)",
        login_args=("auth", "login"),
    ),
    # Full ACP turn with opencode-ai 1.18.33 via `opencode acp`. The `opencode` row drives the
    # same CLI over its HTTP face instead; this row keeps the ACP face selectable.
    AgentProfile(
        id="opencode-acp",
        name="opencode (ACP)",
        cli="opencode",
        connection=ConnectionKind.ACP,
        launch_args=("acp",),
        install_hint="npm install -g opencode-ai (or brew install sst/tap/opencode)",
        login_args=("auth", "login"),
    ),
    # Full ACP turn with @zed-industries/claude-code-acp 0.16.2, no arguments. It logs in
    # through the claude CLI (its authMethod says "run `claude /login`"), so it has no login args of its own.
    AgentProfile(
        id="claude-code-acp",
        name="Claude Code (ACP)",
        cli="claude-code-acp",
        connection=ConnectionKind.ACP,
        launch_args=(),
        install_hint="npm install -g @zed-industries/claude-code-acp",
        api_key_env=("ANTHROPIC_API_KEY",),
    ),
    # Full ACP turn with @zed-industries/codex-acp 0.16.0, no arguments; its initialize
    # answer advertises env_var auth methods CODEX_API_KEY and OPENAI_API_KEY.
    AgentProfile(
        id="codex-acp",
        name="Codex (ACP)",
        cli="codex-acp",
        connection=ConnectionKind.ACP,
        launch_args=(),
        install_hint="npm install -g @zed-industries/codex-acp",
        api_key_env=("CODEX_API_KEY", "OPENAI_API_KEY"),
    ),
    # Full turn with @mariozechner/pi-coding-agent 0.73.1 via `pi --mode rpc` (its own JSONL
    # RPC, not ACP). anyagent's hint names @earendil-works/pi-coding-agent; we hint the package we ran.
    AgentProfile(
        id="pi",
        name="pi",
        cli="pi",
        connection=ConnectionKind.PI,
        launch_args=("--mode", "rpc"),
        install_hint="npm install -g @mariozechner/pi-coding-agent",
    ),
    # anyagent catalog (not run here): `hermes acp`, login `hermes login`, installed under ~/.local/bin.
    AgentProfile(
        id="hermes",
        name="Hermes Agent",
        cli="hermes",
        connection=ConnectionKind.ACP,
        launch_args=("acp",),
        install_hint="see https://github.com/NousResearch/hermes-agent",
        login_args=("login",),
        extra_dirs=(".local/bin",),
    ),
    # anyagent catalog (not run here): the CLI is `kiro-cli`, `kiro-cli acp`, login `kiro-cli login`.
    AgentProfile(
        id="kiro",
        name="Kiro CLI",
        cli="kiro-cli",
        connection=ConnectionKind.ACP,
        launch_args=("acp",),
        install_hint="install Kiro CLI from https://kiro.dev",
        login_args=("login",),
        extra_dirs=(".local/bin",),
    ),
    # anyagent catalog, flag placement verified there against grok 1.0.4: `--no-auto-update` is top-level (skips a
    # multi-second update check at launch), `--no-leader` belongs to `agent` (never attach to a stale shared
    # leader process). Not run here.
    AgentProfile(
        id="grok",
        name="Grok",
        cli="grok",
        connection=ConnectionKind.ACP,
        launch_args=("--no-auto-update", "agent", "--no-leader", "stdio"),
        install_hint="npm install -g @xai-official/grok (or curl -fsSL https://x.ai/cli/install.sh | bash)",
        api_key_env=("XAI_API_KEY",),
        extra_dirs=(".local/bin", ".grok/bin", ".npm-global/bin"),
    ),
)

_BY_ID = {row.id: row for row in PROFILES}


def profile(agent_id: str) -> AgentProfile | None:
    """The catalog row for `agent_id`, or None when the catalog has no such agent."""
    return _BY_ID.get(agent_id)


def login_methods(agent: AgentProfile, executable: str) -> list[LoginMethod]:
    """How a user logs in to `agent`: its own login command run from `executable`, then one `EnvVar` per API key."""
    methods: list[LoginMethod] = []
    if agent.login_args:
        command = [executable, *agent.login_args]
        methods.append(TerminalLogin(command=command, env={}, description=f"Run `{' '.join(command)}` in a terminal"))
    methods.extend(EnvVarLogin(name=name) for name in agent.api_key_env)
    return methods

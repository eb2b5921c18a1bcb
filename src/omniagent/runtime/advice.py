"""What a person should do next: one sentence per failure, with the command or variable that fixes it.

Shared by every face that talks to people: `run` and `chat` print it, the runtime's exceptions carry it in their
message (so the sidecar's `ErrorBody.message` and a Python `except OmniagentError` show the same words). Never a
secret: keys are named by their variable, never shown.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from omniagent.protocols.sidecar.agents import DiscoveryReport, LoginMethod, TerminalLogin
from omniagent.runtime.catalog import PROFILES, ConnectionKind, profile

# Where a person gets a key for each variable the engine reads (the vendors' own key pages).
KEY_PAGES: dict[str, str] = {
    "ANTHROPIC_API_KEY": "https://console.anthropic.com/settings/keys",
    "OPENAI_API_KEY": "https://platform.openai.com/api-keys",
    "GEMINI_API_KEY": "https://aistudio.google.com/apikey",
}
# The agent CLIs most people install, named in the first-run guidance (the rest: `omniagent agents`).
_SUGGESTED = ("claude", "codex", "gemini")


def install_hint(agent_id: str) -> str:
    """How to install an agent, as a clause: the catalog's command, else where to look."""
    row = profile(agent_id)
    if row is None or row.connection is ConnectionKind.ENGINE:
        return "`omniagent agents` lists the agents omniagent knows"
    return f"install it with `{row.install_hint}`"


def login_hint(methods: Sequence[LoginMethod]) -> str:
    """How to log in, from the methods the agent offers: its login command or the variables it reads."""
    ways = []
    for method in methods:
        if isinstance(method, TerminalLogin):
            ways.append(f"run `{shlex.join(method.command)}`")
        else:
            page = KEY_PAGES.get(method.name)
            ways.append(f"set {method.name}" + (f" (get a key at {page})" if page else ""))
    return "log in: " + "; or ".join(ways) if ways else "log in with the agent's own CLI, then try again"


def rejected_hint(rejected: str, methods: Sequence[LoginMethod]) -> str:
    """The provider turned a credential down: name it, and say where a new one comes from."""
    page = KEY_PAGES.get(rejected)
    fix = f"check it, or make a new one at {page}" if page else "check it, or replace it"
    other = [m for m in methods if isinstance(m, TerminalLogin)]
    more = f"; or {login_hint(other).removeprefix('log in: ')}" if other else ""
    return f"the provider rejected {rejected} (HTTP 401): {fix}{more}"


def first_run(report: DiscoveryReport) -> str:
    """With no agent to drive and no key: the three ways forward, with the commands to type."""
    missing = {agent.id: agent for agent in report.missing}
    installs = [
        f"       {missing[agent_id].install_hint:<48} # {missing[agent_id].name}"
        for agent_id in _SUGGESTED
        if agent_id in missing
    ]
    if not installs:
        installs = [f"       {row.install_hint:<48} # {row.name}" for row in PROFILES if row.id in _SUGGESTED]
    keys = [f"       {'export ' + name + '=…':<48} # {page}" for name, page in KEY_PAGES.items()]
    return "\n".join(
        [
            "omniagent found no agent to drive and no model provider key. Three ways forward:",
            "  1. install an agent CLI you use (`omniagent agents` lists every one omniagent drives):",
            *installs,
            "  2. give omniagent's own engine a provider key:",
            *keys,
            "  3. or point the engine at a local OpenAI-compatible server (Ollama, llama.cpp), no key needed:",
            "       export OLLAMA_HOST=127.0.0.1:11434",
            '       omniagent run -m ollama/MODEL "…"                # MODEL as the server names it',
        ]
    )

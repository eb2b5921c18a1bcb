"""MCP server settings as one `ServerSpec` per server: what a face passes (ACP `mcpServers`, the sidecar's
`mcp_servers`) and what the config files say.

The config files have the `.mcp.json` shape other agents read::

    {"mcpServers": {
        "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                   "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
        "docs": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_KEY}"}}
    }}

- user scope: `mcp.json` in the engine's config dir (beside providers.json). It alone may say `"projectServers":
  true`, which lets project files count: a project file names programs to run, and a repository just cloned must
  not start them by being opened.
- project scope: `.mcp.json` at the workspace root; its server of a name replaces the user file's.
- a server is stdio (`command`, optional `args`, `env`, `cwd`) or streamable HTTP (`"type": "http"`, `url`, optional
  `headers`); with no `type`, a `url` means HTTP. SSE (`"type": "sse"`) is not supported.
- `${VAR}` and `${VAR:-default}` in command, args, env, cwd, url and headers read the engine's environment; a server
  naming an unset variable without a default is left out.

Every problem is a sentence for a diagnostic naming the file and the server, never a value (env values and headers
often hold keys).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from omniagent.errors import OmniagentError

USER_FILE = "mcp.json"
PROJECT_FILE = ".mcp.json"
# The user file's switch that lets a workspace's `.mcp.json` count.
PROJECT_SWITCH = "projectServers"
_HTTP_TYPES = frozenset({"http", "streamable-http", "streamableHttp"})
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True, slots=True)
class McpLimits:
    """How long a server may take to start and a call to answer (seconds), and how much of a call's result the
    model reads (characters)."""

    start_timeout: float = 30.0
    call_timeout: float = 600.0
    output_cap: int = 64 * 1024


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One MCP server: stdio when `command` is set, else streamable HTTP at `url`. `origin` says who named it, for
    diagnostics ("the ACP client", a config file's path). A relative `cwd` is taken from the workspace root."""

    name: str
    origin: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command else "http"

    def secrets(self) -> list[str]:
        """The values a diagnostic must never show: env values and header values."""
        return [v for v in (*self.env.values(), *self.headers.values()) if v]


class _Missing(OmniagentError):
    """A `${VAR}` with no value and no default (caught in `servers_of`)."""

    def __init__(self, variable: str) -> None:
        super().__init__(variable)
        self.variable = variable


def load_files(user_dir: Path | None, root: str, environ: Mapping[str, str]) -> tuple[list[ServerSpec], list[str]]:
    """The servers of the user file and (when it allows) the workspace's project file, project over user; and
    the problems found, as sentences."""
    problems: list[str] = []
    user: dict[str, Any] = {}
    if user_dir is not None:
        user = _read_json(user_dir / USER_FILE, problems)
    specs = servers_of(user, str(user_dir / USER_FILE), environ, problems) if user_dir is not None else []
    if user.get(PROJECT_SWITCH) is True:
        path = Path(root) / PROJECT_FILE
        specs = merge(specs, servers_of(_read_json(path, problems), str(path), environ, problems))
    return specs, problems


def merge(*layers: list[ServerSpec]) -> list[ServerSpec]:
    """The servers of every layer; a later layer's server replaces an earlier one's of the same name."""
    by_name: dict[str, ServerSpec] = {}
    for layer in layers:
        for spec in layer:
            by_name.pop(spec.name, None)
            by_name[spec.name] = spec
    return list(by_name.values())


def servers_of(
    document: Mapping[str, Any], origin: str, environ: Mapping[str, str], problems: list[str]
) -> list[ServerSpec]:
    """The servers of one `{"mcpServers": {…}}` document; each bad entry is a problem and is left out."""
    servers = document.get("mcpServers", {})
    if not isinstance(servers, dict):
        problems.append(f"{origin}: `mcpServers` is not an object; no server of it is used")
        return []
    specs = []
    for name, entry in servers.items():
        where = f"MCP server `{name}` in {origin}"
        try:
            spec = _spec(name, entry, origin, environ)
        except _Missing as missing:
            problems.append(f"{where} is left out: the environment variable {missing.variable} is not set")
        except ValueError as exc:
            problems.append(f"{where} is left out: {exc}")
        else:
            specs.append(spec)
    return specs


def _spec(name: str, entry: Any, origin: str, environ: Mapping[str, str]) -> ServerSpec:
    if not name:
        raise ValueError("a server needs a name")
    if not isinstance(entry, dict):
        raise ValueError("its entry is not an object")
    kind = entry.get("type")
    url = entry.get("url")
    if kind == "sse":
        raise ValueError("SSE servers are not supported (use streamable HTTP)")
    if kind in _HTTP_TYPES or (kind is None and url is not None and "command" not in entry):
        url = _expand(url, environ) if isinstance(url, str) else None
        if url is None or not url.startswith(("http://", "https://")):
            raise ValueError("`url` must be an http(s) URL")
        headers = _strings(entry.get("headers", {}), "headers")
        return ServerSpec(name, origin, url=url, headers={k: _expand(v, environ) for k, v in headers.items()})
    if kind not in (None, "stdio"):
        raise ValueError(f"the type {kind!r} is not stdio or http")
    command = entry.get("command")
    if not isinstance(command, str) or not command:
        raise ValueError("`command` must be a non-empty string")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError("`args` must be a list of strings")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError("`cwd` must be a string")
    env = _strings(entry.get("env", {}), "env")
    return ServerSpec(
        name,
        origin,
        command=_expand(command, environ),
        args=tuple(_expand(a, environ) for a in args),
        env={k: _expand(v, environ) for k, v in env.items()},
        cwd=_expand(cwd, environ) if cwd is not None else None,
    )


def _strings(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"`{what}` must be an object of strings")
    return value


def _expand(text: str, environ: Mapping[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = environ.get(name)
        if value is not None:
            return value
        if default is not None:
            return default
        raise _Missing(name)

    return _VARIABLE.sub(one, text)


def _read_json(path: Path, problems: list[str]) -> dict[str, Any]:
    """The JSON object in `path`; {} when the file is missing, or (with a problem) unreadable or not an object."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path} cannot be read ({type(exc).__name__}); no server of it is used")
        return {}
    try:
        document = json.loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        problems.append(f"{path} is not valid JSON{f' (line {line})' if line else ''}; no server of it is used")
        return {}
    if not isinstance(document, dict):
        problems.append(f"{path} is not a JSON object; no server of it is used")
        return {}
    return document

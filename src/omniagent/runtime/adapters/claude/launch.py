"""How a Claude Code session starts: the command line for a new, resumed or forked session, the creation-time
options as flags, the caller's MCP servers as `--mcp-config`, and the prompt as a stream-json `user` line.

Observed with claude 2.1.197: `--session-id <uuid>` names a new session (so its resume token exists before the first
prompt; the CLI itself reports its id only in the `system/init` that follows the first prompt); `--resume <id>`
continues a transcript under the same id; `--resume <id> --fork-session --session-id <new>` copies it under a new id.
The CLI accepts any `--permission-mode` from its own list and rejects others at start, so modes are checked here.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from omniagent.protocols.sidecar.commands import HttpMcp, SseMcp, StdioMcp
from omniagent.runtime import catalog
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.acp.info import AgentFacts
from omniagent.runtime.adapters.acp.prompt import prompt_blocks
from omniagent.runtime.errors import InvalidConfiguration

# The option ids a session takes at creation, and the flag each one becomes.
CREATION_FLAGS: Mapping[str, str] = {"mode": "--permission-mode", "model": "--model", "effort": "--effort"}
# `claude --help` (2.1.197): the choices of `--permission-mode`, in the order the CLI lists them.
PERMISSION_MODES: tuple[str, ...] = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions", "auto")
# What `prompt_blocks` may inline: Claude Code takes images (not audio or PDFs) in a user message.
_INLINE = AgentFacts(image=True)


def new_session_id() -> str:
    """A fresh session id (a random UUID never repeats; the CLI dedupes user messages and sessions by uuid)."""
    return str(uuid.uuid4())


def launch(request: d.ConnectRequest) -> tuple[list[str], str]:
    """The argv for this session and the session id it will have (its resume token).

    Raises: `InvalidConfiguration` for an option the CLI does not take at creation, or a mode it does not know.
    """
    installation = request.installation
    row = catalog.profile(installation.id)
    argv = [installation.executable_path, *(row.launch_args if row is not None else ())]
    if request.fork is not None:
        session_id = new_session_id()
        argv += ["--resume", request.fork, "--fork-session", "--session-id", session_id]
        if request.fork_at is not None:
            argv.append(f"--resume-session-at={request.fork_at}")
    elif request.resume is not None:
        session_id = request.resume
        argv += ["--resume", session_id]
    else:
        session_id = new_session_id()
        argv += ["--session-id", session_id]
    for option, value in request.configure.items():
        argv += [_flag(option, value), str(value)]
    if request.mcp_servers:
        argv += ["--mcp-config", json.dumps({"mcpServers": mcp_config(request)})]
    if request.disable_tools:
        argv += ["--tools", ""]
    return argv, session_id


def _flag(option: str, value: object) -> str:
    flag = CREATION_FLAGS.get(option)
    if flag is None:
        raise InvalidConfiguration(f"unknown option `{option}`")
    if not isinstance(value, str):
        raise InvalidConfiguration("wrong value type")
    if option == "mode" and value not in PERMISSION_MODES:
        raise InvalidConfiguration(f"`{value}` is not a choice of `mode`")
    return flag


def mcp_config(request: d.ConnectRequest) -> dict[str, Any]:
    """The caller's MCP servers in Claude Code's `mcpServers` shape (stdio, http and sse all work)."""
    servers: dict[str, Any] = {}
    for server in request.mcp_servers:
        connection = server.connection
        if isinstance(connection, StdioMcp):
            servers[server.name] = {"command": connection.command, "args": connection.args, "env": connection.env}
        elif isinstance(connection, HttpMcp | SseMcp):
            kind = "http" if isinstance(connection, HttpMcp) else "sse"
            servers[server.name] = {"type": kind, "url": connection.url, "headers": connection.headers}
    return servers


async def user_line(prompt: d.PromptInput, message_uuid: str) -> tuple[dict[str, Any], list[str]]:
    """The stream-json `user` line for a prompt (images inline as base64, every attachment named in the text),
    and warnings about attachments that could not be read."""
    blocks, warnings = await prompt_blocks(prompt, _INLINE)
    # Text alone goes as a plain string, as the CLI's own clients send it.
    content: str | list[dict[str, Any]] = (
        blocks[0]["text"] if len(blocks) == 1 else [_anthropic_block(block) for block in blocks]
    )
    line = {
        "type": "user",
        "uuid": message_uuid,
        "session_id": "",
        "parent_tool_use_id": None,
        "message": {"role": "user", "content": content},
    }
    return line, warnings


def _anthropic_block(block: Mapping[str, Any]) -> dict[str, Any]:
    if block["type"] != "image":
        return dict(block)
    # ACP's `{type, data, mimeType}` image as Anthropic's `{type, source}`.
    return {"type": "image", "source": {"type": "base64", "media_type": block["mimeType"], "data": block["data"]}}

"""`omniagent acp`: the engine as an ACP agent on stdin/stdout (newline-delimited JSON-RPC 2.0).

The process answers the client's first request before it imports asyncio when that request is `initialize` (the
usual case): the answer needs only the provider catalog (`serving/acp/handshake.py`), and asyncio is most of a bare
Python start (docs/performance.md, `wire/first_request.py`). Then the connection takes over (`faces/acp/connection.py`)
with every byte read so far. Logs go to stderr; stdout carries only the wire.

With `--agent ID` the process serves that agent through an in-process hub instead (`faces/acp/any_agent.py`): no
engine, no answer before asyncio.
"""

from __future__ import annotations

from pathlib import Path

from omniagent.serving.acp.handshake import Handshake
from omniagent.wire.dialects import STRICT
from omniagent.wire.first_request import answer_first_request


def run_acp(
    data_dir: Path | None,
    agent: str | None = None,
    mock: str | None = None,
    hub: str | None = None,
    session: str | None = None,
    token: str | None = None,
) -> int:
    """Serve ACP on stdin/stdout until stdin closes; returns the exit code (0; 141 when stdout's reader went away,
    1 when stdout broke otherwise or the mock script is bad; 130 on Ctrl-C). `agent`: serve that agent through the
    hub, not the engine (`mock`: the script agent `mock` plays). `hub`: be a client of that hub (`faces/acp/bridge.py`;
    `session`: join it, `token`: the hub's token)."""
    if hub is not None:
        from omniagent.faces.acp.bridge import run_bridge

        return run_bridge(hub, token, agent=agent, session=session)
    if session is not None or token is not None:
        import sys

        print("omniagent acp: --session and --token go with --hub URL", file=sys.stderr)
        return 2
    if agent is not None:
        return _run_hub(agent, mock, data_dir)
    greeted = Handshake(data_dir)
    try:
        prelude = answer_first_request(STRICT, {"initialize": greeted.initialize})
        from omniagent.logs import configure

        configure("acp")
        from omniagent.faces.acp.connection import serve_connection

        return serve_connection(data_dir, greeted, prelude)
    except KeyboardInterrupt:
        return 130


def _run_hub(agent: str, mock: str | None, data_dir: Path | None) -> int:
    from omniagent.logs import configure, face_logger

    configure("acp")
    script = None
    if mock is not None:
        from omniagent.runtime.adapters.mock import MockScriptError, load_script

        try:
            script = load_script(mock)
        except MockScriptError as exc:
            face_logger("acp").error("%s", exc)
            return 1
    from omniagent.faces.acp.any_agent import serve_hub_acp

    try:
        return serve_hub_acp(agent, script, data_dir)
    except KeyboardInterrupt:
        return 130

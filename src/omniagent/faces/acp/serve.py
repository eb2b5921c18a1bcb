"""`omniagent acp`: an agent served as an ACP agent on stdin/stdout (newline-delimited JSON-RPC 2.0), our engine
unless `--agent ID` names another.

Every agent is served the same way (`faces/acp/any_agent.py`: `serving/acp`'s `AcpAgent` over an in-process hub),
so `omniagent acp` is `omniagent acp --agent omniagent`. The process answers the client's first request before it
imports asyncio when that request is `initialize` (the usual case): the answer needs only the agent's id and, for
our engine, which providers lack a key (`serving/acp/handshake.py`), and asyncio is most of a bare Python start
(docs/performance.md, `wire/first_request.py`). Then the connection takes over with every byte read so far. Logs go
to stderr; stdout carries only the wire. With `--hub URL` the process is a client of that hub instead
(`faces/acp/bridge.py`).
"""

from __future__ import annotations

import os
from pathlib import Path

from omniagent.serving.acp.handshake import ENGINE, AgentFacts, Handshake
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
    1 when stdout broke otherwise or the mock script is bad; 130 on Ctrl-C). `agent`: the agent `session/new` opens
    (our engine when None; `mock`: the script agent `mock` plays). `data_dir`: the engine's data dir, whose `hub/`
    folder keeps the session index. `hub`: be a client of that hub (`faces/acp/bridge.py`; `session`: join it,
    `token`: the hub's token)."""
    if hub is not None:
        from omniagent.faces.acp.bridge import run_bridge

        return run_bridge(hub, token, agent=agent, session=session)
    if session is not None or token is not None:
        import sys

        print("omniagent acp: --session and --token go with --hub URL", file=sys.stderr)
        return 2
    if data_dir is not None:
        # The engine reads its data dir from the environment (as `omniagent rpc`'s children do); its sandbox hides
        # that dir from the model's commands.
        os.environ["OMNIAGENT_DATA_DIR"] = os.fspath(data_dir.absolute())
    script = None
    if mock is not None:
        from omniagent.logs import face_logger
        from omniagent.runtime.adapters.mock import MockScriptError, load_script

        try:
            script = load_script(mock)
        except MockScriptError as exc:
            face_logger("acp").error("%s", exc)
            return 1
    chosen = agent or ENGINE
    # Our engine keeps every conversation, so an earlier process's session loads with it (v1 `loadSession`).
    greeted = Handshake(AgentFacts(chosen, data_dir, load=chosen == ENGINE))
    try:
        prelude = answer_first_request(STRICT, {"initialize": greeted.initialize})
        from omniagent.logs import configure

        configure("acp")
        from omniagent.faces.acp.any_agent import serve_any_agent

        return serve_any_agent(greeted, script, data_dir, prelude)
    except KeyboardInterrupt:
        return 130

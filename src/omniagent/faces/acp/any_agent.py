"""`omniagent acp [--agent ID]`: any agent as an ACP agent on stdin/stdout, through an in-process hub.

One process = one hub = one client, which owns its sessions: `ID` is the agent `session/new` opens (our engine,
Claude Code, Codex, pi, opencode, an ACP agent, or `mock` with `--mock SCRIPT`). The hub's state folder is the
network hub's, `hub/` in the engine's data dir (`--data-dir`), shared by every such process: a session gets an id no
other process has, and a later process (an editor's next connection) resumes it by its agent's resume token under
that id. Closing stdin ends the connection: every request already read is answered (a running turn is cancelled, so
a waiting v1 `session/prompt` answers `cancelled`), the sessions close, the process exits 0; a write that finds
stdout's reader gone ends it at once with 141.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from omniagent.engine.config import STDIN_LIMIT, engine_dirs
from omniagent.faces.pipes import BrokenStdout, unless_reader_gone
from omniagent.hub.hub import Hub
from omniagent.hub.session import ClientInfo
from omniagent.hub.state import HubState
from omniagent.logs import face_logger
from omniagent.runtime.errors import AgentError
from omniagent.runtime.runtime import MockScript
from omniagent.serving.acp.connection import AcpAgent
from omniagent.serving.acp.handshake import Handshake
from omniagent.wire.dialects import STRICT
from omniagent.wire.first_request import Prelude
from omniagent.wire.jsonrpc import Peer
from omniagent.wire.stdio import open_stdio

# Seconds every request read before EOF gets to be answered (the turns it waits on are cancelled meanwhile).
SHUTDOWN_GRACE = 10.0
# Seconds between cancel rounds: a prompt read just before EOF may start its turn after the first cancel.
_ROUND = 0.2


def serve_any_agent(greeted: Handshake, mock: MockScript | None, data_dir: Path | None, prelude: Prelude) -> int:
    """Serve until stdin closes; returns the exit code (0; 141 when stdout's reader went away, 1 when stdout broke
    otherwise). `greeted` may have answered the first `initialize` already (`prelude`: the bytes read before;
    `wire/first_request.py`). `data_dir`: the engine's data dir (else OMNIAGENT_DATA_DIR, else the user's), whose
    `hub/` folder keeps the session index."""
    return asyncio.run(_serve(greeted, mock, HubState(engine_dirs(data_dir)[0] / "hub"), prelude))


async def _serve(greeted: Handshake, mock: MockScript | None, state: HubState, prelude: Prelude) -> int:
    broken = BrokenStdout(face_logger("acp"))
    async with (
        Hub.start(mock=mock, state=state) as hub,
        open_stdio(limit=STDIN_LIMIT, prelude=prelude) as (
            reader,
            sink,
        ),
    ):
        peer = Peer(reader, sink, dialect=STRICT, name="acp-agent", answer_after_eof=True, on_output_error=broken)
        client = hub.client(ClientInfo("stdio", transport="stdio"), owns_sessions=True)
        connection = AcpAgent(peer, client, handshake=greeted, alone=True)
        try:
            async with peer:
                await unless_reader_gone(peer.wait_closed(), broken.event)
                await unless_reader_gone(_answer_the_rest(peer, connection), broken.event)
        finally:
            await connection.aclose()
    return broken.exit_status()


async def _answer_the_rest(peer: Peer, connection: AcpAgent) -> None:
    """After EOF: cancel running turns until every request read before EOF has its answer (bounded)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SHUTDOWN_GRACE
    while unanswered := peer.unanswered():
        for attachment in connection.turning():
            with contextlib.suppress(AgentError):  # ended meanwhile
                await attachment.cancel()
        left = deadline - loop.time()
        if left <= 0:
            face_logger("acp").warning("%d requests unanswered at exit", len(unanswered))
            return
        await asyncio.wait(unanswered, timeout=min(left, _ROUND))

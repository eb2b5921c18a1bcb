"""A stand-in hub process for the `/sidecar` tests: a `Hub` with its state folder, the sidecar endpoint mounted at
`/sidecar` in a small Starlette app on hypercorn, on a socket bound to 127.0.0.1 by the kernel's choice of port.

    python tests/hub/sidecar_server.py STATE_DIR [--mock SCRIPT] [--retention N]

Prints its URL (`http://127.0.0.1:PORT`) on stdout once it listens; stops on SIGTERM. The bearer token is the state
folder's (`HubState.token()`); a connection without it is refused before the WebSocket opens.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import signal
import socket
import sys
from pathlib import Path

from hypercorn.asyncio import serve
from hypercorn.config import Config
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket

from omniagent.faces.hub.sidecar import sidecar_endpoint
from omniagent.hub.hub import Hub
from omniagent.hub.session import ClientInfo
from omniagent.hub.state import HubState
from omniagent.runtime.runtime import Runtime


async def main(state_dir: Path, mock: str | None, retention: int) -> None:
    state = HubState(state_dir)
    token = state.token()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    script = Runtime.load_mock(mock) if mock else None
    async with Hub.start(state=state, mock=script, retention=retention) as hub:

        async def endpoint(websocket: WebSocket) -> None:
            given = websocket.headers.get("authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
                await websocket.close(code=1008)
                return
            name = websocket.headers.get("user-agent", "client")
            await sidecar_endpoint(websocket, hub, ClientInfo(name, transport="websocket"))

        app = Starlette(routes=[WebSocketRoute("/sidecar", endpoint)])
        config = Config()
        config.bind = [f"fd://{listener.fileno()}"]
        config.graceful_timeout = 1.0
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        server = asyncio.create_task(serve(app, config, shutdown_trigger=stop.wait))  # type: ignore[arg-type]
        print(f"http://127.0.0.1:{listener.getsockname()[1]}", flush=True)
        await server


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("state", type=Path)
    parser.add_argument("--mock")
    parser.add_argument("--retention", type=int, default=10_000)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.state, arguments.mock, arguments.retention))
    sys.exit(0)

"""The hub's ASGI application: its routes behind the guard.

    /acp              ACP: POST, GET (SSE), DELETE, and GET with Upgrade: websocket; sessions run the default agent
    /acp/{agent}      the same, sessions running `agent` unless a client says otherwise
    /sidecar          the sidecar wire over WebSocket (`faces/hub/sidecar.py`, mounted when present)
    /, /page/…        the web page (`faces/hub/web/`, when given): its files, /login, /logout, /auth, /batch/…

Everything is refused before routing without the right `Host`, `Origin` and bearer token (`guard.py`); the page's
door (`web/door.py`) lets in its public files and, on its own routes, its login cookie instead of the token.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp
from starlette.websockets import WebSocket

from omniagent.faces.hub.connection import AcpSide, BindAcp
from omniagent.faces.hub.drain import DrainFirst
from omniagent.faces.hub.guard import Guard, TokenFile
from omniagent.faces.hub.registry import Registry, TooManyClients
from omniagent.faces.hub.settings import Limits, Listener
from omniagent.faces.hub.streamable import StreamableHttp, refusal
from omniagent.faces.hub.web.routes import Page
from omniagent.faces.hub.websocket import serve_acp_websocket
from omniagent.hub.hub import Hub, HubClient
from omniagent.hub.session import ClientInfo
from omniagent.wire.jsonrpc import Peer

# An agent id in a path: what the runtime's ids look like, so a path never smuggles anything else.
AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")

# Builds the ACP agent side of one connection: (peer, the connection's hub client, the agent its sessions run, the
# session its `session/new` joins instead of opening one, if any).
AcpFactory = Callable[[Peer, HubClient, str, str | None], AcpSide]
# Serves the sidecar wire on one WebSocket, not yet accepted (`faces/hub/sidecar.py` `sidecar_endpoint`).
FULL = "the hub has as many clients as it takes; try again later"
SidecarEndpoint = Callable[[WebSocket, Hub, ClientInfo], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class HubApp:
    """The application and what the server must close when it stops."""

    asgi: ASGIApp
    registry: Registry


def build_app(
    hub: Hub,
    *,
    listener: Listener,
    token: TokenFile,
    default_agent: str,
    acp: AcpFactory,
    limits: Limits | None = None,
    sidecar: SidecarEndpoint | None = None,
    page: Page | None = None,
) -> HubApp:
    """The hub's application over `hub`: ACP connections built by `acp`, the sidecar by `sidecar` (absent: 404),
    the web page by `page` (absent: none)."""
    registry = Registry(hub, limits or Limits())

    def bind_for(agent: str | None, attach: str | None = None) -> BindAcp:
        chosen = agent or default_agent
        return lambda peer, client: acp(peer, client, chosen, attach)

    http = StreamableHttp(registry, bind_for)

    async def acp_http(request: Request) -> Response:
        agent = request.path_params.get("agent")
        if agent is not None and not AGENT_ID.fullmatch(agent):
            return refusal(404, "no such agent id")
        return await http.handle(request)

    async def acp_websocket(websocket: WebSocket) -> None:
        agent = websocket.path_params.get("agent")
        if agent is not None and not AGENT_ID.fullmatch(agent):
            await websocket.send_denial_response(refusal(404, "no such agent id"))
            return
        await serve_acp_websocket(websocket, registry, bind_for(agent, websocket.query_params.get("attach")))

    async def sidecar_websocket(websocket: WebSocket) -> None:
        if sidecar is None:
            await websocket.send_denial_response(refusal(404, "the sidecar wire is not served by this hub yet"))
            return
        try:
            with registry.admitted():
                # A socket without the bearer header was let in by the page's cookie: the web page.
                name = "sidecar" if "authorization" in websocket.headers else "web page"
                await sidecar(websocket, hub, ClientInfo(name, transport="websocket"))
        except TooManyClients:
            await websocket.send_denial_response(
                refusal(503, "the hub has as many clients as it takes; try again later")
            )

    methods = ["GET", "POST", "DELETE"]
    routes = [
        Route("/acp", acp_http, methods=methods),
        Route("/acp/{agent}", acp_http, methods=methods),
        WebSocketRoute("/acp", acp_websocket),
        WebSocketRoute("/acp/{agent}", acp_websocket),
        WebSocketRoute("/sidecar", sidecar_websocket),
        *(page.routes() if page is not None else []),
    ]
    door = page.door if page is not None else None
    guarded = Guard(Starlette(routes=routes), listener=listener, token=token, door=door)
    return HubApp(DrainFirst(guarded, limit=registry.limits.max_body_bytes), registry)

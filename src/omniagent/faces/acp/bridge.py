"""`omniagent acp --hub URL`: an ACP agent on stdio whose sessions are a hub's, for an editor that only speaks stdio.

Every line the editor writes goes to the hub's `/acp` WebSocket as one text frame, and every frame the hub sends comes
out as one line, unchanged: the hub's ACP connection does the work (negotiation, sessions, attach). With `--session`,
the editor's `session/new` attaches to that session of the hub instead of opening one (history first, then live), so
an editor can join a session started elsewhere. Closing stdin closes the WebSocket; the hub's sessions go on.
"""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import urlencode, urlsplit, urlunsplit

from omniagent.faces.pipes import BrokenStdout
from omniagent.wire.jsonl import MAX_LINE_BYTES, LineWriter, read_lines
from omniagent.wire.stdio import open_stdio

log = logging.getLogger("omniagent.acp")


def acp_endpoint(url: str, *, agent: str | None, session: str | None) -> str:
    """The hub's ACP WebSocket address for `url` (the hub's base URL, or its /acp endpoint)."""
    parts = urlsplit(url)
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    path = parts.path.rstrip("/")
    if not path.startswith("/acp"):
        path = f"{path}/acp"
    if agent is not None and path == "/acp":
        path = f"/acp/{agent}"
    query = urlencode({"attach": session}) if session is not None else parts.query
    return urlunsplit((scheme, parts.netloc, path, query, ""))


async def relay(endpoint: str, token: str) -> int:
    """Relay stdio ↔ the hub until either side ends; returns the exit code (0; 1 when the hub cannot be reached or
    refuses us; 141 when stdout's reader went away)."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus, WebSocketException

    broken = BrokenStdout(log)
    try:
        hub = await connect(
            endpoint,
            additional_headers={"Authorization": f"Bearer {token}"},
            max_size=MAX_LINE_BYTES,
            compression=None,  # many small messages: deflate would cost the hub more than it saves on loopback
        )
    except InvalidStatus as exc:
        log.error("the hub refused the connection: HTTP %s", exc.response.status_code)
        return 1
    except (OSError, WebSocketException, TimeoutError) as exc:
        log.error("cannot reach the hub at %s: %s", _shown(endpoint), type(exc).__name__)
        return 1
    async with hub, open_stdio(limit=MAX_LINE_BYTES) as (reader, sink), LineWriter(sink, on_error=broken) as writer:

        async def upstream() -> None:
            async for line in read_lines(reader):
                if isinstance(line, bytes):
                    await hub.send(line.decode("utf-8", "replace"))
            await hub.close()

        async def downstream() -> None:
            async for frame in hub:
                text = frame if isinstance(frame, str) else frame.decode("utf-8", "replace")
                writer.send_nowait(text.encode())

        tasks = [asyncio.ensure_future(upstream()), asyncio.ensure_future(downstream())]
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        for task in done:
            if task.exception() is not None and not isinstance(task.exception(), WebSocketException):
                raise task.exception()  # type: ignore[misc]
    return 0 if broken.error is None else 141


def _shown(endpoint: str) -> str:
    parts = urlsplit(endpoint)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def run_bridge(url: str, token: str | None, *, agent: str | None, session: str | None) -> int:
    """Entry point of `omniagent acp --hub URL`; returns the exit code (0 when either side ends the connection;
    1 when the hub cannot be reached, refuses us, or no token is known; 141 when stdout's reader is gone)."""
    from omniagent.logs import configure
    from omniagent.serving.hub_token import hub_token

    configure("acp")
    token = hub_token(token)
    if token is None:
        log.error("no hub token: pass --token, set OMNIAGENT_HUB_TOKEN, or run on the hub's machine")
        return 1
    try:
        return asyncio.run(relay(acp_endpoint(url, agent=agent, session=session), token))
    except KeyboardInterrupt:
        return 130

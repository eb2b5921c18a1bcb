"""Three clients on one session of a real hub, over three transports (the sidecar wire over WebSocket, ACP over
WebSocket, ACP over streamable HTTP + SSE): each sees the session's events in the same order, and the permission the
turn asks is answered by one of them, resolved exactly once, and seen resolved by the other two."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from tests.faces.hub.harness import call, initialize, sse_events
from tests.hub.hub_process import WAIT, WireClient, running_hub

SSE = {"Accept": "text/event-stream"}


def _sequence(message: dict[str, Any]) -> int | None:
    found: int | None = message.get("params", {}).get("_meta", {}).get("omniagent", {}).get("sequence")
    return found


class Messages:
    """Every message one ACP client received, in order, with a bounded wait for the next one that matches."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self._changed = asyncio.Event()

    def add(self, message: dict[str, Any]) -> None:
        self.seen.append(message)
        self._changed.set()

    async def until(self, found: Any) -> dict[str, Any]:
        async with asyncio.timeout(WAIT):
            while True:
                for message in self.seen:
                    if found(message):
                        return message
                self._changed.clear()
                await self._changed.wait()

    def sequences(self, session: str) -> list[int]:
        return [
            s
            for m in self.seen
            if m.get("method") == "session/update" and m["params"]["sessionId"] == session
            if (s := _sequence(m)) is not None
        ]


@contextlib.asynccontextmanager
async def _acp_websocket(url: str, token: str) -> AsyncIterator[tuple[ClientConnection, Messages]]:
    headers = {"Authorization": f"Bearer {token}"}
    async with connect(url.replace("http", "ws", 1) + "/acp", additional_headers=headers) as socket:
        messages = Messages()

        async def read() -> None:
            with contextlib.suppress(Exception):
                async for frame in socket:
                    messages.add(json.loads(frame))

        reader = asyncio.create_task(read())
        try:
            yield socket, messages
        finally:
            reader.cancel()


def _is_permission(message: dict[str, Any]) -> bool:
    return message.get("method") == "session/request_permission"


async def test_three_transports_one_order_one_answer(tmp_path: Path) -> None:
    async with (
        running_hub(tmp_path / "hub", mock="turn") as hub,
        WireClient.connect(hub) as sidecar,
        _acp_websocket(hub.url, hub.token) as (socket, over_ws),
        httpx.AsyncClient(timeout=WAIT) as http,
    ):
        session = (await sidecar.ok("open", agent="mock", dir=str(tmp_path)))["id"]
        attach = {"sessionId": session, "role": "controller", "historyPolicy": "full"}

        await socket.send(json.dumps(initialize(0)))
        await socket.send(json.dumps(call(1, "session/attach", attach)))
        await over_ws.until(lambda m: m.get("id") == 1)

        auth = {"Authorization": f"Bearer {hub.token}"}
        opened = await http.post(f"{hub.url}/acp", json=initialize(0), headers=auth)
        headers = auth | {"Acp-Connection-Id": opened.headers["acp-connection-id"]}
        over_sse = Messages()
        async with http.stream("GET", f"{hub.url}/acp", headers=headers | SSE) as stream:

            async def read() -> None:
                async for _, message in sse_events(stream):
                    over_sse.add(message)

            reading = asyncio.create_task(read())
            sent = await http.post(
                f"{hub.url}/acp", json=call(1, "session/attach", attach), headers=headers | {"Acp-Session-Id": session}
            )
            assert sent.status_code == 202, sent.text
            await over_sse.until(lambda m: m.get("id") == 1)

            await sidecar.ok("prompt", session=session, text="go")
            asked_ws = await over_ws.until(_is_permission)
            asked_sse = await over_sse.until(_is_permission)
            reply = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
            await socket.send(json.dumps({"jsonrpc": "2.0", "id": asked_ws["id"], "result": reply}))

            # The other two see it resolved: the sidecar its RequestClosed, the SSE client its request withdrawn.
            withdrawn = await over_sse.until(lambda m: m.get("method") == "$/cancel_request")
            assert withdrawn["params"] == {"requestId": asked_sse["id"]}
            resolved = await over_sse.until(lambda m: m.get("method") == "_omniagent/request_resolved")
            assert resolved["params"]["requestId"] == asked_sse["params"]["_meta"]["omniagent"]["requestId"]
            ended = await sidecar.until(lambda line: "TurnEnded" in str(line.get("event", {}).get("kind")))
            assert ended["event"]["kind"]["TurnEnded"]["stop"] == {"Completed": {"source": "Protocol"}}
            for messages in (over_ws, over_sse):
                await messages.until(lambda m: "Done." in json.dumps(m))
            reading.cancel()

    events = [line["event"] for line in sidecar.lines if "event" in line]
    closed = [e for e in events if "RequestClosed" in e["kind"]]
    assert len(closed) == 1  # answered once
    everything = [e["sequence"] for e in events]
    assert everything == list(range(1, len(everything) + 1))  # the sidecar client: every event, in order
    # The ACP clients see the events ACP can tell, in the same order, each once, and the same ones.
    assert over_ws.sequences(session) == over_sse.sequences(session)
    told = over_ws.sequences(session)
    assert told == sorted(told) and set(told) <= set(everything) and len(told) >= 3
    for messages in (over_ws, over_sse):  # the sidecar client's prompt, shown to the ACP clients
        said = [m for m in messages.seen if "user_message_chunk" in json.dumps(m)]
        assert [m["params"]["update"]["content"]["text"] for m in said] == ["go"]

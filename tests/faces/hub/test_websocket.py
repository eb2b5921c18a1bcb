"""ACP over WebSocket on the hub (in-process hypercorn on 127.0.0.1, the `websockets` client, a scripted agent side):
the upgrade's connection id, one message per text frame, binary frames ignored, initialize first, bad frames
answered in the wire's error shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from omniagent.faces.hub.settings import Limits
from tests.faces.hub.harness import Served, call, hub_process, initialize, serving


def _ws(hub: Served, path: str = "/acp") -> str:
    return hub.url.replace("http://", "ws://") + path


async def _answer(ws: ClientConnection) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(await ws.recv())
    return message


async def test_the_upgrade_names_the_connection_and_frames_carry_messages(tmp_path: Path) -> None:
    async with serving(tmp_path) as hub, connect(_ws(hub, "/acp/codex"), additional_headers=hub.headers()) as ws:
        assert ws.response is not None and len(ws.response.headers["Acp-Connection-Id"]) == 32
        await ws.send(json.dumps(initialize(), indent=2))  # newlines inside a frame are fine
        answer = await _answer(ws)
        assert answer["id"] == 1 and answer["result"]["_meta"]["agent"] == "codex"
        await ws.send(b"\x00binary frames are ignored")
        await ws.send(json.dumps(call(2, "session/new", {})))
        assert await _answer(ws) == {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "t1"}}
        await ws.send(json.dumps(call(3, "test/emit", {"sessionId": "t1", "count": 2})))
        got = [await _answer(ws) for _ in range(3)]
        assert [m.get("params", {}).get("_meta", {}).get("omniagent", {}).get("sequence") for m in got] == [1, 2, None]
        assert got[2]["result"] == {"last": 2}
        await ws.send(json.dumps(call(4, "test/ask", {"sessionId": "t1"})))
        asked = await _answer(ws)
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": asked["id"], "result": {"ok": True}}))
        assert (await _answer(ws))["result"] == {"ok": True}


async def test_the_first_message_must_be_initialize(tmp_path: Path) -> None:
    async with serving(tmp_path) as hub, connect(_ws(hub), additional_headers=hub.headers()) as ws:
        await ws.send(json.dumps(call(7, "session/new", {})))
        refused = await _answer(ws)
        assert refused["id"] == 7 and refused["error"]["code"] == -32600 and "initialize" in refused["error"]["message"]
        await ws.send(json.dumps(initialize(8)))
        assert (await _answer(ws))["id"] == 8


@pytest.mark.parametrize(
    ("frame", "code"),
    [("{oops", -32700), ("[]", -32600), ("42", -32600), ('{"jsonrpc":"2.0","id":1e999,"method":"x"}', -32600)],
)
async def test_a_bad_frame_is_answered_in_the_wire_error_shape_and_the_connection_goes_on(
    tmp_path: Path, frame: str, code: int
) -> None:
    async with serving(tmp_path) as hub, connect(_ws(hub), additional_headers=hub.headers()) as ws:
        await ws.send(frame)
        refused = await _answer(ws)
        assert refused["jsonrpc"] == "2.0" and refused["id"] is None and refused["error"]["code"] == code
        await ws.send(json.dumps(initialize()))
        assert (await _answer(ws))["id"] == 1


async def test_a_batch_is_answered_with_one_array_and_a_batch_of_notifications_not_at_all(tmp_path: Path) -> None:
    """JSON-RPC 2.0 batches, as ACP v2 and a stdio peer take them: one frame of the answers to the batch's requests
    (matched by id: a notification in it gets none), per-entry -32600 for entries that are no message, and nothing
    for a batch of notifications only (the next frame is the answer to the next request)."""
    note = {"jsonrpc": "2.0", "method": "_kit/note"}
    async with serving(tmp_path) as hub, connect(_ws(hub), additional_headers=hub.headers()) as ws:
        await ws.send(json.dumps(initialize()))
        await _answer(ws)
        await ws.send(json.dumps([call("a", "test/echo", {"n": 1}), note, call(7, "test/echo", {"n": 2})]))
        answers = json.loads(await ws.recv())
        assert isinstance(answers, list) and len(answers) == 2
        assert {a["id"]: a["result"] for a in answers} == {"a": {"n": 1}, 7: {"n": 2}}
        await ws.send(json.dumps([note, note]))
        await ws.send(json.dumps([17, True, None]))
        invalid = json.loads(await ws.recv())  # the first frame after the notifications: nothing answered them
        assert [(e["id"], e["error"]["code"]) for e in invalid] == [(None, -32600)] * 3
        await ws.send(json.dumps(call(8, "test/echo", {})))
        assert await _answer(ws) == {"jsonrpc": "2.0", "id": 8, "result": {}}


async def test_a_frame_over_the_limit_closes_that_socket_only(tmp_path: Path) -> None:
    # The peer's line limit answers a message over max_body_bytes (the process also sets hypercorn's frame limit to
    # it, which closes the socket of a larger frame: tests/faces/hub/test_security.py).
    async with (
        serving(tmp_path, Limits(max_body_bytes=1000)) as hub,
        connect(_ws(hub), additional_headers=hub.headers()) as ws,
    ):
        await ws.send(json.dumps(initialize()))
        await _answer(ws)
        await ws.send(json.dumps(call(2, "test/echo", {"pad": "x" * 2000})))
        refused = await _answer(ws)
        assert refused["error"]["code"] == -32600 and refused["error"]["data"] == {"limitBytes": 1000}
        await ws.send(json.dumps(call(3, "test/echo", {})))
        assert (await _answer(ws))["id"] == 3


async def test_closing_the_socket_ends_the_connection(tmp_path: Path) -> None:
    async with serving(tmp_path) as hub:
        async with connect(_ws(hub), additional_headers=hub.headers()) as ws:
            await ws.send(json.dumps(initialize()))
            await _answer(ws)
            assert len(hub.app.registry) == 1
        async with connect(_ws(hub), additional_headers=hub.headers()) as ws:  # a round trip after the close
            await ws.send(json.dumps(initialize()))
            await _answer(ws)
            assert len(hub.app.registry) == 1


async def test_the_client_limit_refuses_the_upgrade_with_503(tmp_path: Path) -> None:
    async with (
        serving(tmp_path, Limits(max_clients=1)) as hub,
        connect(_ws(hub), additional_headers=hub.headers()),
    ):
        with pytest.raises(InvalidStatus) as refused:
            async with connect(_ws(hub), additional_headers=hub.headers()):
                pass
        assert refused.value.response.status_code == 503


async def test_an_app_built_without_a_sidecar_endpoint_answers_its_route_404(tmp_path: Path) -> None:
    async with serving(tmp_path) as hub:
        with pytest.raises(InvalidStatus) as refused:
            async with connect(_ws(hub, "/sidecar"), additional_headers=hub.headers()):
                pass
        assert refused.value.response.status_code == 404


async def test_sidecar_connections_count_against_the_same_client_limit(tmp_path: Path) -> None:
    """`--max-clients` bounds every connection of the hub: a `/sidecar` socket takes a place as an ACP one does."""
    with hub_process(tmp_path, "--mock", "turn", "--max-clients", "1") as hub:
        ws_url = hub.url.replace("http", "ws", 1)
        async with connect(f"{ws_url}/sidecar", additional_headers=hub.headers()) as sidecar:
            await sidecar.recv()  # the hello: the place is taken
            for path in ("/sidecar", "/acp"):
                with pytest.raises(InvalidStatus) as refused:
                    async with connect(f"{ws_url}{path}", additional_headers=hub.headers()):
                        pass
                assert refused.value.response.status_code == 503

"""ACP's streamable HTTP transport on the hub (in-process hypercorn on 127.0.0.1, real httpx clients, a scripted
agent side): the RFD's answers and refusals, the connection and session streams, and what a reconnect replays."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from omniagent.faces.hub.settings import Limits
from tests.faces.hub.harness import Served, call, initialize, serving, sse_events, take

SSE = {"Accept": "text/event-stream"}


async def _connect(client: httpx.AsyncClient, hub: Served, path: str = "/acp") -> tuple[str, dict[str, Any]]:
    answer = await client.post(f"{hub.url}{path}", json=initialize(), headers=hub.headers())
    assert answer.status_code == 200, answer.text
    return answer.headers["acp-connection-id"], answer.json()


async def _post(
    client: httpx.AsyncClient, hub: Served, connection: str, message: Any, **headers: str
) -> httpx.Response:
    return await client.post(
        f"{hub.url}/acp", json=message, headers=hub.headers(**{"Acp-Connection-Id": connection, **headers})
    )


async def _emit(
    client: httpx.AsyncClient, hub: Served, connection: str, request_id: int, session: str, count: int
) -> None:
    """Ask the scripted side for `count` numbered updates of `session`."""
    message = call(request_id, "test/emit", {"sessionId": session, "count": count})
    assert (await _post(client, hub, connection, message, **{"Acp-Session-Id": session})).status_code == 202


def _stream(client: httpx.AsyncClient, hub: Served, connection: str, **extra: str) -> Any:
    """GET the connection's SSE stream (`extra`: Acp-Session-Id, Last-Event-ID, …)."""
    return client.stream(
        "GET", f"{hub.url}/acp", headers=hub.headers(**SSE, **{"Acp-Connection-Id": connection}, **extra)
    )


def _sequence(message: dict[str, Any]) -> int | None:
    sequence: int | None = message.get("params", {}).get("_meta", {}).get("omniagent", {}).get("sequence")
    return sequence


async def test_initialize_opens_a_connection_and_answers_in_the_body(tmp_path: Path) -> None:
    async with serving(tmp_path) as hub, httpx.AsyncClient() as client:
        connection, body = await _connect(client, hub)
        assert body["id"] == 1 and body["result"]["protocolVersion"] == 1
        assert body["result"]["connectionId"] == connection
        assert body["result"]["_meta"]["agent"] == "scripted"
        _, other = await _connect(client, hub, "/acp/claude")  # the path picks the agent new sessions run
        assert other["result"]["_meta"]["agent"] == "claude"


async def test_requests_are_answered_202_and_their_answers_come_on_the_stream(tmp_path: Path) -> None:
    async with serving(tmp_path) as hub, httpx.AsyncClient() as client:
        connection, _ = await _connect(client, hub)
        async with _stream(client, hub, connection) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            events = sse_events(stream)
            posted = await _post(client, hub, connection, call(2, "session/new", {"cwd": "/", "mcpServers": []}))
            assert posted.status_code == 202 and posted.content == b""
            [(number, answer)] = await take(events, 1)
            assert number == "1" and answer == {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "t1"}}
            await _emit(client, hub, connection, 3, "t1", 2)
            got = await take(events, 3)
            assert [number for number, _ in got] == ["2", "3", "4"]
            assert [_sequence(m) for _, m in got[:2]] == [1, 2]
            assert got[2][1] == {"jsonrpc": "2.0", "id": 3, "result": {"last": 2}}


async def test_a_server_request_is_answered_by_a_post(tmp_path: Path) -> None:
    async with serving(tmp_path) as hub, httpx.AsyncClient() as client:
        connection, _ = await _connect(client, hub)
        async with _stream(client, hub, connection) as stream:
            events = sse_events(stream)
            await _post(client, hub, connection, call(2, "session/new", {}))
            await take(events, 1)
            await _post(client, hub, connection, call(3, "test/ask", {"sessionId": "t1"}), **{"Acp-Session-Id": "t1"})
            [(_, asked)] = await take(events, 1)
            assert asked["method"] == "session/request_permission"
            reply = {"jsonrpc": "2.0", "id": asked["id"], "result": {"outcome": {"outcome": "cancelled"}}}
            assert (await _post(client, hub, connection, reply, **{"Acp-Session-Id": "t1"})).status_code == 202
            [(_, answer)] = await take(events, 1)
            assert answer["id"] == 3 and answer["result"] == {"outcome": {"outcome": "cancelled"}}


@pytest.mark.parametrize(
    ("headers", "content", "status", "says"),
    [
        ({"Content-Type": "text/plain"}, b"{}", 415, "application/json"),
        ({"Content-Type": "application/json"}, b"{not json", 400, "parse error"),
        ({"Content-Type": "application/json"}, b"[]", 400, "empty batch"),
        (
            {"Content-Type": "application/json"},
            b'[{"jsonrpc":"2.0","id":1,"method":"initialize"}]',
            400,
            "Acp-Connection-Id",  # a batch is not the initialize that opens a connection
        ),
        ({"Content-Type": "application/json"}, b'"hello"', 400, "invalid request"),
        ({"Content-Type": "application/json"}, json.dumps(call(2, "session/new")).encode(), 400, "Acp-Connection-Id"),
        (
            {"Content-Type": "application/json", "Acp-Connection-Id": "nope"},
            json.dumps(call(2, "session/new")).encode(),
            404,
            "unknown Acp-Connection-Id",
        ),
    ],
)
async def test_posts_the_transport_refuses(
    tmp_path: Path, headers: dict[str, str], content: bytes, status: int, says: str
) -> None:
    async with serving(tmp_path) as hub, httpx.AsyncClient() as client:
        answer = await client.post(f"{hub.url}/acp", content=content, headers=hub.headers(**headers))
        assert answer.status_code == status
        body = answer.json()
        assert body["jsonrpc"] == "2.0" and "id" in body and says in body["error"]["message"]
        if "parse error" in says:
            assert body["error"]["code"] == -32700 and body["id"] is None


async def test_a_batch_is_answered_with_one_array_on_the_connection_stream(tmp_path: Path) -> None:
    """A batch POST is 202 (it is about no one session: no Acp-Session-Id needed); its answers come as one array on
    the connection stream, matched by id, none for its notifications; a batch of notifications only gets nothing
    (the next event is the answer to the next request)."""
    note = {"jsonrpc": "2.0", "method": "_kit/note"}
    async with serving(tmp_path) as hub, httpx.AsyncClient() as client:
        connection, _ = await _connect(client, hub)
        async with _stream(client, hub, connection) as stream:
            events = sse_events(stream)
            batch = [call("a", "test/echo", {"n": 1}), note, call(7, "test/echo", {"n": 2})]
            posted = await _post(client, hub, connection, batch)
            assert posted.status_code == 202 and posted.content == b""
            [(_, answers)] = await take(events, 1)
            assert isinstance(answers, list) and len(answers) == 2
            assert {a["id"]: a["result"] for a in answers} == {"a": {"n": 1}, 7: {"n": 2}}
            assert (await _post(client, hub, connection, [note, note])).status_code == 202
            assert (await _post(client, hub, connection, call(8, "test/echo", {}))).status_code == 202
            [(_, answer)] = await take(events, 1)
            assert answer == {"jsonrpc": "2.0", "id": 8, "result": {}}


async def test_a_session_message_needs_its_session_header(tmp_path: Path) -> None:
    async with serving(tmp_path) as hub, httpx.AsyncClient() as client:
        connection, _ = await _connect(client, hub)
        message = call(5, "test/emit", {"sessionId": "t1", "count": 1})
        missing = await _post(client, hub, connection, message)
        assert missing.status_code == 400 and missing.json()["id"] == 5
        other = await _post(client, hub, connection, message, **{"Acp-Session-Id": "t2"})
        assert other.status_code == 400 and "differs" in other.json()["error"]["message"]


async def test_a_body_over_the_limit_is_413_and_the_connection_goes_on(tmp_path: Path) -> None:
    async with serving(tmp_path, Limits(max_body_bytes=1000)) as hub, httpx.AsyncClient() as client:
        connection, _ = await _connect(client, hub)
        big = call(2, "test/echo", {"pad": "x" * 2000})
        assert (await _post(client, hub, connection, big)).status_code == 413

        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(5):
                yield b" " * 500

        streamed = await client.post(
            f"{hub.url}/acp",
            content=chunks(),  # no Content-Length: counted as it comes
            headers=hub.headers(**{"Content-Type": "application/json", "Acp-Connection-Id": connection}),
        )
        assert streamed.status_code == 413
        assert (await _post(client, hub, connection, call(3, "test/echo", {}))).status_code == 202


async def test_get_needs_event_stream_and_a_connection(tmp_path: Path) -> None:
    async with serving(tmp_path) as hub, httpx.AsyncClient() as client:
        connection, _ = await _connect(client, hub)
        plain = hub.headers(**{"Acp-Connection-Id": connection})
        assert (await client.get(f"{hub.url}/acp", headers=plain)).status_code == 406
        assert (await client.get(f"{hub.url}/acp", headers=hub.headers(**SSE))).status_code == 400
        unknown = {"Acp-Connection-Id": "0" * 32}
        assert (await client.get(f"{hub.url}/acp", headers=hub.headers(**SSE, **unknown))).status_code == 404
        bad = {"Acp-Connection-Id": connection, "Last-Event-ID": "yesterday"}
        assert (await client.get(f"{hub.url}/acp", headers=hub.headers(**SSE, **bad))).status_code == 400


async def test_delete_ends_the_connection(tmp_path: Path) -> None:
    async with serving(tmp_path) as hub, httpx.AsyncClient() as client:
        assert (await client.delete(f"{hub.url}/acp", headers=hub.headers())).status_code == 400
        connection, _ = await _connect(client, hub)
        async with _stream(client, hub, connection) as stream:
            deleted = await client.delete(f"{hub.url}/acp", headers=hub.headers(**{"Acp-Connection-Id": connection}))
            assert deleted.status_code == 202
            assert [event async for event in sse_events(stream)] == []  # the stream ended
        assert (await _post(client, hub, connection, call(2, "test/echo", {}))).status_code == 404
        assert len(hub.app.registry) == 0


async def test_a_refused_initialize_keeps_no_connection(tmp_path: Path) -> None:
    async with serving(tmp_path) as hub, httpx.AsyncClient() as client:
        answer = await client.post(f"{hub.url}/acp", json=initialize(refuse=True), headers=hub.headers())
        assert answer.status_code == 200 and answer.json()["error"]["code"] == -32602
        assert "acp-connection-id" not in answer.headers
        assert len(hub.app.registry) == 0


async def test_the_client_limit_refuses_with_503(tmp_path: Path) -> None:
    async with serving(tmp_path, Limits(max_clients=2)) as hub, httpx.AsyncClient() as client:
        first, _ = await _connect(client, hub)
        await _connect(client, hub)
        refused = await client.post(f"{hub.url}/acp", json=initialize(), headers=hub.headers())
        assert refused.status_code == 503 and refused.json()["id"] == 1
        await client.delete(f"{hub.url}/acp", headers=hub.headers(**{"Acp-Connection-Id": first}))
        await _connect(client, hub)


async def test_the_connection_stream_resumes_after_the_last_event_id(tmp_path: Path) -> None:
    async with serving(tmp_path) as hub, httpx.AsyncClient() as client:
        connection, _ = await _connect(client, hub)
        head = hub.headers(**SSE, **{"Acp-Connection-Id": connection})
        await _post(client, hub, connection, call(2, "session/new", {}))  # before any stream: kept for the first
        async with client.stream("GET", f"{hub.url}/acp", headers=head) as stream:
            events = sse_events(stream)
            assert [n for n, _ in await take(events, 1)] == ["1"]
            await _emit(client, hub, connection, 3, "t1", 3)
            assert [n for n, _ in await take(events, 2)] == ["2", "3"]
        # Gone after event 3: events 4 and 5 (the last update and the answer) wait for the next stream.
        async with client.stream("GET", f"{hub.url}/acp", headers={**head, "Last-Event-ID": "3"}) as stream:
            got = await take(sse_events(stream), 2)
            assert [n for n, _ in got] == ["4", "5"] and got[1][1]["id"] == 3
        async with client.stream("GET", f"{hub.url}/acp", headers={**head, "Last-Event-ID": "0"}) as stream:
            assert [n for n, _ in await take(sse_events(stream), 5)] == ["1", "2", "3", "4", "5"]


async def test_events_beyond_the_replay_buffer_are_announced_as_missed(tmp_path: Path) -> None:
    async with serving(tmp_path, Limits(replay_messages=3)) as hub, httpx.AsyncClient() as client:
        connection, _ = await _connect(client, hub)
        await _post(client, hub, connection, call(2, "session/new", {}))
        await _emit(client, hub, connection, 3, "t1", 5)
        head = hub.headers(**SSE, **{"Acp-Connection-Id": connection, "Last-Event-ID": "0"})
        async with client.stream("GET", f"{hub.url}/acp", headers=head) as stream:
            (_, missed), *kept = await take(sse_events(stream), 4)
            assert missed == {"jsonrpc": "2.0", "method": "_omniagent/missed", "params": {"messages": 4}}
            assert [n for n, _ in kept] == ["5", "6", "7"]


async def test_a_session_stream_carries_that_session_with_its_sequence_and_replays_on_reconnect(tmp_path: Path) -> None:
    async with serving(tmp_path) as hub, httpx.AsyncClient() as client:
        connection, _ = await _connect(client, hub)
        await _post(client, hub, connection, call(2, "session/new", {}))
        await _post(client, hub, connection, call(3, "session/new", {}))
        head = hub.headers(**SSE, **{"Acp-Connection-Id": connection, "Acp-Session-Id": "t1"})
        async with client.stream("GET", f"{hub.url}/acp", headers=head) as stream:
            events = sse_events(stream)
            await _emit(client, hub, connection, 4, "t2", 1)
            await _emit(client, hub, connection, 5, "t1", 2)
            got = await take(events, 3)  # t2's update and its answer are not on t1's stream
            assert [(n, m.get("params", {}).get("sessionId")) for n, m in got[:2]] == [("1", "t1"), ("2", "t1")]
            assert got[2] == (None, {"jsonrpc": "2.0", "id": 5, "result": {"last": 2}})
        # Away after sequence 1; three more happen meanwhile.
        await _emit(client, hub, connection, 6, "t1", 3)
        async with client.stream("GET", f"{hub.url}/acp", headers={**head, "Last-Event-ID": "1"}) as stream:
            events = sse_events(stream)
            assert [n for n, _ in await take(events, 4)] == ["2", "3", "4", "5"]
            await _emit(client, hub, connection, 7, "t1", 1)
            assert [n for n, _ in await take(events, 2)] == ["6", None]
        # While t1 had a stream of its own, its messages went there only; the connection stream holds what came
        # while it had none (events 3-5 and their answer), once: the replays were for the session stream.
        async with _stream(client, hub, connection, **{"Last-Event-ID": "0"}) as stream:
            got = await take(sse_events(stream), 8)
            assert [_sequence(m) for _, m in got if m.get("params", {}).get("sessionId") == "t1"] == [3, 4, 5]
            assert [m.get("id") for _, m in got if "result" in m] == [2, 3, 4, 6]


async def test_a_session_stream_for_an_unknown_session_with_a_cursor_is_404(tmp_path: Path) -> None:
    async with serving(tmp_path) as hub, httpx.AsyncClient() as client:
        connection, _ = await _connect(client, hub)
        head = hub.headers(**SSE, **{"Acp-Connection-Id": connection, "Acp-Session-Id": "t9", "Last-Event-ID": "0"})
        assert (await client.get(f"{hub.url}/acp", headers=head)).status_code == 404


async def test_http2_without_tls_carries_the_same_exchange(tmp_path: Path) -> None:
    async with serving(tmp_path) as hub, httpx.AsyncClient(http1=False, http2=True) as client:
        connection, _ = await _connect(client, hub)
        async with _stream(client, hub, connection) as stream:
            assert stream.http_version == "HTTP/2"
            events = sse_events(stream)
            await _post(client, hub, connection, call(2, "test/echo", {"over": "h2"}))
            [(_, answer)] = await take(events, 1)
            assert answer["result"] == {"over": "h2"}

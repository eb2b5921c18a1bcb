"""The JSON-RPC peer as seen on the wire: correlation, dispatch, batches, cancellation, errors, limits, closing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from omniagent.wire.dialects import CODEX, LITE, STRICT, Dialect
from omniagent.wire.errors import PeerClosed
from omniagent.wire.jsonrpc import Peer, RequestHandler
from omniagent.wire.messages import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    RpcError,
)

WAIT = 5.0  # seconds: bound on every wait; a healthy run takes milliseconds


class PipeSink:
    """A ByteSink feeding an in-memory StreamReader (one direction of a pipe)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def write(self, data: bytes) -> None:
        self.reader.feed_data(data)

    async def drain(self) -> None:
        return None


class RawEnd:
    """The far end of a peer, speaking raw lines, so tests see exactly what goes over the wire."""

    def __init__(self) -> None:
        self.to_peer = asyncio.StreamReader(limit=1 << 20)
        self.from_peer = asyncio.StreamReader(limit=1 << 24)

    def send(self, value: Any) -> None:
        data = value if isinstance(value, bytes) else json.dumps(value).encode()
        self.to_peer.feed_data(data + b"\n")

    async def recv(self) -> Any:
        async with asyncio.timeout(WAIT):
            return json.loads(await self.from_peer.readline())

    def close(self) -> None:
        self.to_peer.feed_eof()


@asynccontextmanager
async def peer_with_raw_end(
    handlers: dict[str, RequestHandler] | None = None, *, dialect: Dialect = STRICT, max_line_bytes: int = 1 << 20
) -> AsyncIterator[tuple[Peer, RawEnd]]:
    raw = RawEnd()
    peer = Peer(raw.to_peer, PipeSink(raw.from_peer), dialect=dialect, requests=handlers, max_line_bytes=max_line_bytes)
    async with peer:
        yield peer, raw


async def test_requests_flow_both_ways_concurrently_and_correlate_by_id() -> None:
    """JSON-RPC 2.0 §6: responses match requests by id whatever their order; both sides may call at once."""
    a_reader, b_reader = asyncio.StreamReader(), asyncio.StreamReader()
    release_first = asyncio.Event()
    peers: dict[str, Peer] = {}

    async def slow_echo(params: Any) -> Any:
        if params["n"] == 0:
            await release_first.wait()
        return {"n": params["n"]}

    async def ask_back(params: Any) -> Any:
        # A handler may call the other side before it answers (agent asks client for permission mid-request).
        inner = await peers["b"].request("echo", {"n": params["n"] * 10})
        return {"inner": inner["n"]}

    a = Peer(a_reader, PipeSink(b_reader), requests={"echo": slow_echo}, name="a")
    b = Peer(b_reader, PipeSink(a_reader), requests={"ask_back": ask_back}, name="b")
    peers["b"] = b
    async with a, b:
        first = asyncio.create_task(b.request("echo", {"n": 0}))
        second = asyncio.create_task(b.request("echo", {"n": 1}))
        nested = asyncio.create_task(a.request("ask_back", {"n": 2}))
        async with asyncio.timeout(WAIT):
            assert await second == {"n": 1}  # answered while the first is still waiting
            assert await nested == {"inner": 20}
            release_first.set()
            assert await first == {"n": 0}


async def test_a_batch_is_answered_with_one_array_holding_each_request_reply() -> None:
    """JSON-RPC 2.0 §6 (Batch): batch in, one array out, none for notifications, invalid entries → -32600 id null."""
    seen: list[Any] = []

    async def note(params: Any) -> None:
        seen.append(params)

    async def double(params: Any) -> Any:
        return params["x"] * 2

    async with peer_with_raw_end({"double": double}) as (peer, raw):
        peer.on_notification("note", note)
        raw.send(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "double", "params": {"x": 2}},
                {"jsonrpc": "2.0", "method": "note", "params": {"k": 1}},
                5,
                {"jsonrpc": "2.0", "id": "b", "method": "double", "params": {"x": 5}},
            ]
        )
        replies = await raw.recv()
        assert isinstance(replies, list)
        by_id = {r["id"]: r for r in replies}
        assert by_id[1]["result"] == 4
        assert by_id["b"]["result"] == 10
        assert by_id[None]["error"]["code"] == INVALID_REQUEST
        assert len(replies) == 3
        assert seen == [{"k": 1}]


async def test_an_empty_batch_gets_a_single_invalid_request_error() -> None:
    """JSON-RPC 2.0 §6 (Batch): an empty array → one -32600 with id null."""
    async with peer_with_raw_end() as (_, raw):
        raw.send([])
        reply = await raw.recv()
        assert reply == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": INVALID_REQUEST, "message": reply["error"]["message"]},
        }


async def test_an_all_notification_batch_gets_no_reply() -> None:
    """JSON-RPC 2.0 §6 (Batch): an all-notification batch gets nothing back (not `[]`)."""

    async def ping(params: Any) -> Any:
        return "pong"

    async with peer_with_raw_end({"ping": ping}) as (_, raw):
        raw.send([{"jsonrpc": "2.0", "method": "nobody_listens"}])
        raw.send({"jsonrpc": "2.0", "id": 9, "method": "ping"})
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 9, "result": "pong"}


async def test_cancel_request_stops_the_handler_and_answers_request_cancelled() -> None:
    """ACP `$/cancel_request`: the receiver MAY stop the work and MUST still answer, here with -32800."""
    started, stopped = asyncio.Event(), asyncio.Event()

    async def forever(params: Any) -> Any:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()

    async with peer_with_raw_end({"forever": forever}) as (_, raw):
        raw.send({"jsonrpc": "2.0", "id": 7, "method": "forever"})
        async with asyncio.timeout(WAIT):
            await started.wait()
        raw.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}})
        reply = await raw.recv()
        assert reply["id"] == 7
        assert reply["error"]["code"] == REQUEST_CANCELLED
        assert stopped.is_set()


async def test_cancelling_an_outgoing_request_sends_cancel_request_with_its_id() -> None:
    """ACP `$/cancel_request` is sent by the side that sent the request, when its caller gives up."""
    async with peer_with_raw_end() as (peer, raw):
        call = asyncio.create_task(peer.request("slow", {"a": 1}))
        sent = await raw.recv()
        assert sent == {"jsonrpc": "2.0", "id": sent["id"], "method": "slow", "params": {"a": 1}}
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert await raw.recv() == {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": sent["id"]}}
        # A late answer to the cancelled id is dropped, and the peer keeps working.
        raw.send({"jsonrpc": "2.0", "id": sent["id"], "result": None})
        again = asyncio.create_task(peer.request("next"))
        second = await raw.recv()
        raw.send({"jsonrpc": "2.0", "id": second["id"], "result": "ok"})
        async with asyncio.timeout(WAIT):
            assert await again == "ok"


async def test_handler_errors_become_error_replies_without_exception_text() -> None:
    """House style: RpcError → its code; any other exception → -32603 with a fixed sentence, no traceback."""

    async def refuse(params: Any) -> Any:
        raise RpcError(-32000, "authentication required", {"methods": ["a"]})

    async def crash(params: Any) -> Any:
        raise ValueError("secret /home/me/.key sk-123")

    async with peer_with_raw_end({"refuse": refuse, "crash": crash}) as (_, raw):
        raw.send({"jsonrpc": "2.0", "id": 1, "method": "refuse"})
        assert (await raw.recv())["error"] == {
            "code": -32000,
            "message": "authentication required",
            "data": {"methods": ["a"]},
        }
        raw.send({"jsonrpc": "2.0", "id": 2, "method": "crash"})
        reply = await raw.recv()
        assert reply["error"]["code"] == INTERNAL_ERROR
        assert "secret" not in json.dumps(reply) and "Traceback" not in json.dumps(reply)
        raw.send({"jsonrpc": "2.0", "id": 3, "method": "missing"})
        assert (await raw.recv())["error"]["code"] == METHOD_NOT_FOUND


async def test_bad_lines_get_parse_or_invalid_request_errors_and_reading_goes_on() -> None:
    """JSON-RPC 2.0 §5.1: not JSON → -32700 id null; JSON but no valid call → -32600 (with the id if it had one)."""

    async def ping(params: Any) -> Any:
        return "pong"

    async with peer_with_raw_end({"ping": ping}) as (_, raw):
        raw.send(b"{not json")
        assert (await raw.recv())["error"]["code"] == PARSE_ERROR
        raw.send({"id": 4, "method": "ping"})  # strict dialect: the "jsonrpc" member is required
        reply = await raw.recv()
        assert (reply["id"], reply["error"]["code"]) == (4, INVALID_REQUEST)
        raw.send({"jsonrpc": "2.0", "id": 5, "method": 12})
        assert (await raw.recv())["error"]["code"] == INVALID_REQUEST
        raw.send({"jsonrpc": "2.0", "id": 6, "method": "ping"})
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 6, "result": "pong"}


async def test_a_number_out_of_range_refuses_its_request_by_id_and_loses_nothing_else() -> None:
    """Issue 26: JSON holding a number past u64 (or an overflowing float) is still JSON: a request is answered
    -32602 with its own id, a notification is dropped, a response fails the call it answers; an out-of-range id
    cannot be echoed, so that line is answered as unreadable (id null). Reading goes on."""
    seen: list[Any] = []

    async def ping(params: Any) -> Any:
        return "pong"

    async def note(params: Any) -> None:
        seen.append(params)

    async with peer_with_raw_end({"ping": ping}) as (peer, raw):
        peer.on_notification("note", note)
        raw.send(b'{"jsonrpc":"2.0","id":"r1","method":"ping","params":{"n":18446744073709551616}}')
        reply = await raw.recv()
        assert (reply["id"], reply["error"]["code"]) == ("r1", INVALID_PARAMS)
        assert "out of range" in reply["error"]["message"]
        raw.send(b'{"jsonrpc":"2.0","id":2,"method":"ping","params":[1e400]}')
        assert (await raw.recv())["id"] == 2
        raw.send(b'{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}')
        assert (await raw.recv())["id"] is None
        raw.send(b'{"jsonrpc":"2.0","method":"note","params":{"n":-18446744073709551616}}')
        raw.send(b'{"jsonrpc":"2.0","method":"note","params":{"n":1}}')
        raw.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 3, "result": "pong"}
        assert seen == [{"n": 1}]
        call = asyncio.create_task(peer.request("x"))
        sent = await raw.recv()
        raw.send(b'{"jsonrpc":"2.0","id":%d,"result":{"n":1e400}}' % sent["id"])
        with pytest.raises(RpcError) as info:
            async with asyncio.timeout(WAIT):
                await call
        assert info.value.code == PARSE_ERROR


async def test_an_oversize_line_is_answered_and_skipped() -> None:
    """House style: an oversize line is a wire error, never a crash; the next line is read normally."""

    async def ping(params: Any) -> Any:
        return "pong"

    async with peer_with_raw_end({"ping": ping}, max_line_bytes=1000) as (_, raw):
        raw.send({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 5000}})
        reply = await raw.recv()
        assert (reply["id"], reply["error"]["code"]) == (None, INVALID_REQUEST)
        assert reply["error"]["data"] == {"limitBytes": 1000}
        raw.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert (await raw.recv())["result"] == "pong"


async def test_remote_error_reply_raises_rpc_error_with_its_code() -> None:
    """JSON-RPC 2.0 §5.1: an error response fails the awaiting call with the code and data it carries."""
    async with peer_with_raw_end() as (peer, raw):
        call = asyncio.create_task(peer.request("x"))
        sent = await raw.recv()
        raw.send({"jsonrpc": "2.0", "id": sent["id"], "error": {"code": -32002, "message": "nope", "data": [1]}})
        with pytest.raises(RpcError) as info:
            async with asyncio.timeout(WAIT):
                await call
        assert (info.value.code, info.value.data) == (-32002, [1])


async def test_peer_closing_fails_pending_and_later_requests_with_peer_closed() -> None:
    """Our choice: EOF from the other side fails every pending call at once with PeerClosed (never a hang)."""
    async with peer_with_raw_end() as (peer, raw):
        call = asyncio.create_task(peer.request("x"))
        await raw.recv()
        raw.close()
        with pytest.raises(PeerClosed):
            async with asyncio.timeout(WAIT):
                await call
        async with asyncio.timeout(WAIT):
            await peer.wait_closed()
        with pytest.raises(PeerClosed):
            await peer.request("y")


async def test_leaving_the_peer_fails_calls_still_waiting() -> None:
    """Our choice: closing our side is orderly: waiting callers see PeerClosed, not a hang."""
    async with peer_with_raw_end() as (peer, raw):
        call = asyncio.create_task(peer.request("x"))
        await raw.recv()
    with pytest.raises(PeerClosed):
        async with asyncio.timeout(WAIT):
            await call


async def test_lite_dialect_has_no_jsonrpc_member_and_string_ids() -> None:
    """The yuke wire: no "jsonrpc" member, string ids, an unknown id answered as ""."""

    async def ping(params: Any) -> Any:
        return "pong"

    async with peer_with_raw_end({"ping": ping}, dialect=LITE) as (peer, raw):
        call = asyncio.create_task(peer.request("session.list", {}))
        sent = await raw.recv()
        assert sent == {"id": "1", "method": "session.list", "params": {}}
        raw.send({"id": "1", "result": []})
        async with asyncio.timeout(WAIT):
            assert await call == []
        raw.send({"id": "r1", "method": "ping"})
        assert await raw.recv() == {"id": "r1", "result": "pong"}
        raw.send({"id": 7, "method": "ping"})
        reply = await raw.recv()
        assert (reply["id"], reply["error"]["code"]) == ("", LITE.invalid_request_code)
        raw.send([{"id": "x", "method": "ping"}])  # no batches in this dialect
        assert (await raw.recv())["id"] == ""


async def test_codex_dialect_has_no_jsonrpc_member_and_takes_integer_ids_from_zero() -> None:
    """Codex app-server: JSON-RPC 2.0 without `jsonrpc`; its requests to us are numbered from 0; errors keep `data`."""

    async def approve(params: Any) -> Any:
        return {"decision": "accept"}

    async def refuse(params: Any) -> Any:
        raise RpcError(METHOD_NOT_FOUND, "not supported", {"why": "test"})

    async with peer_with_raw_end({"approve": approve, "refuse": refuse}, dialect=CODEX) as (peer, raw):
        call = asyncio.create_task(peer.request("thread/start", {"cwd": "/w"}))
        assert await raw.recv() == {"id": 1, "method": "thread/start", "params": {"cwd": "/w"}}
        raw.send({"id": 1, "result": {"thread": {}}})
        async with asyncio.timeout(WAIT):
            assert await call == {"thread": {}}
        raw.send({"id": 0, "method": "approve", "params": {}})
        assert await raw.recv() == {"id": 0, "result": {"decision": "accept"}}
        raw.send({"id": 1, "method": "refuse"})
        assert await raw.recv() == {
            "id": 1,
            "error": {"code": METHOD_NOT_FOUND, "message": "not supported", "data": {"why": "test"}},
        }


async def test_unrouted_notifications_reach_the_fallback_in_order_with_routed_ones() -> None:
    """Our choice: a peer given `other_notifications` sees every notification without a handler, interleaved in
    arrival order with the routed ones (the Codex adapter maps ~90 methods and reports unknown ones)."""
    got: list[str] = []
    done = asyncio.Event()

    async def routed(params: Any) -> None:
        got.append("routed")

    async def other(method: str, params: Any) -> None:
        got.append(method)
        if method == "last":
            done.set()

    raw = RawEnd()
    peer = Peer(
        raw.to_peer,
        PipeSink(raw.from_peer),
        dialect=CODEX,
        notifications={"turn/started": routed},
        other_notifications=other,
    )
    async with peer:
        for method in ("a", "turn/started", "b", "last"):
            raw.send({"method": method, "params": {}})
        async with asyncio.timeout(WAIT):
            await done.wait()
    assert got == ["a", "routed", "b", "last"]


async def test_notifications_reach_their_handler_in_arrival_order() -> None:
    """ACP: session/update notifications are a stream; the peer delivers them in order."""
    got: list[int] = []
    done = asyncio.Event()

    async def update(params: Any) -> None:
        got.append(params["i"])
        if params["i"] == 49:
            done.set()

    async with peer_with_raw_end() as (peer, raw):
        peer.on_notification("session/update", update)
        for i in range(50):
            raw.send({"jsonrpc": "2.0", "method": "session/update", "params": {"i": i}})
        async with asyncio.timeout(WAIT):
            await done.wait()
    assert got == list(range(50))


async def test_fallbacks_take_the_methods_no_handler_was_registered_for() -> None:
    """`on_other_requests` / `on_other_notifications` get (method, params) for unregistered methods only; a fallback
    raising RpcError answers that error, and registered handlers still win."""
    seen: list[tuple[str, Any]] = []
    noted = asyncio.Event()

    async def other_request(method: str, params: Any) -> Any:
        if method == "_refuse":
            raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")
        return {"echo": method, "params": params}

    async def other_notification(method: str, params: Any) -> None:
        seen.append((method, params))
        noted.set()

    async def known(params: Any) -> Any:
        return "known"

    async with peer_with_raw_end({"known": known}) as (peer, raw):
        peer.on_other_requests(other_request)
        peer.on_other_notifications(other_notification)
        raw.send({"jsonrpc": "2.0", "id": 1, "method": "_x.ai/ask", "params": {"q": 1}})
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 1, "result": {"echo": "_x.ai/ask", "params": {"q": 1}}}
        raw.send({"jsonrpc": "2.0", "id": 2, "method": "known"})
        assert (await raw.recv())["result"] == "known"
        raw.send({"jsonrpc": "2.0", "id": 3, "method": "_refuse"})
        assert (await raw.recv())["error"]["code"] == METHOD_NOT_FOUND
        raw.send({"jsonrpc": "2.0", "method": "_claude/rateLimit", "params": {"left": 0}})
        async with asyncio.timeout(WAIT):
            await noted.wait()
    assert seen == [("_claude/rateLimit", {"left": 0})]


async def test_an_error_inside_the_peer_block_propagates_as_itself() -> None:
    """Our choice: leaving the peer never wraps the caller's exception in an ExceptionGroup."""
    with pytest.raises(KeyError):
        async with peer_with_raw_end():
            raise KeyError("boom")

"""Detach and replay through the real `omniagent hub` (the mock agent, `serving/acp` on the streamable HTTP
transport): a session stream that reconnects with `Last-Event-ID` gets exactly the session's events it missed, in
order, none twice; a message goes to one stream, never both."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from tests.faces.hub.harness import HubProcess, call, hub_process, initialize, sse_events

SSE = {"Accept": "text/event-stream"}


Post = Callable[..., Awaitable[None]]


async def _connect(client: httpx.AsyncClient, hub: HubProcess) -> tuple[dict[str, str], Post]:
    """A new ACP connection: its id header, and a POST on it (extra headers as keywords) that must get a 202."""
    answer = await client.post(f"{hub.url}/acp", json=initialize(), headers=hub.headers())
    connection = {"Acp-Connection-Id": answer.headers["acp-connection-id"]}

    async def post(message: dict[str, Any], **extra: str) -> None:
        sent = await client.post(f"{hub.url}/acp", json=message, headers=hub.headers(**connection, **extra))
        assert sent.status_code == 202, sent.text

    return connection, post


async def _new_session(post: Post, everything: AsyncIterator[tuple[str | None, dict[str, Any]]], cwd: Path) -> str:
    """`session/new` in `cwd`; its id, read from the connection stream `everything`."""
    await post(call(1, "session/new", {"cwd": str(cwd), "mcpServers": []}))
    async for _, message in everything:
        if message.get("id") == 1:
            return str(message["result"]["sessionId"])
    raise AssertionError("the connection stream ended before session/new was answered")


def _sequence(message: dict[str, Any]) -> int | None:
    sequence: int | None = message.get("params", {}).get("_meta", {}).get("omniagent", {}).get("sequence")
    return sequence


async def test_a_session_stream_reconnecting_gets_exactly_what_it_missed(tmp_path: Path) -> None:
    with hub_process(tmp_path, "--mock", "turn") as hub:
        async with httpx.AsyncClient(timeout=30) as client:
            connection, post = await _connect(client, hub)
            async with client.stream("GET", f"{hub.url}/acp", headers=hub.headers(**SSE, **connection)) as whole:
                everything = sse_events(whole)
                session = await _new_session(post, everything, tmp_path)
                scoped = {"Acp-Session-Id": session}
                stream_headers = hub.headers(**SSE, **connection, **scoped)
                seen: list[int] = []
                async with client.stream("GET", f"{hub.url}/acp", headers=stream_headers) as first:
                    await post(
                        call(2, "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
                        **scoped,
                    )
                    async for event_id, message in sse_events(first):
                        if event_id is not None:
                            assert int(event_id) == _sequence(message)
                            seen.append(int(event_id))
                        if message.get("method") == "session/request_permission":
                            asked = message
                            break
                # Gone. The permission is answered meanwhile (on the connection stream's client) and the turn ends.
                reply = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
                await post({"jsonrpc": "2.0", "id": asked["id"], "result": reply}, **scoped)
                whole_sequences: list[int] = []
                async for _, message in everything:
                    if message.get("params", {}).get("sessionId") == session and _sequence(message) is not None:
                        whole_sequences.append(_sequence(message))  # type: ignore[arg-type]
                    if message.get("id") == 2:
                        assert message["result"]["stopReason"] == "end_turn"
                        break
            last = whole_sequences[-1]
            async with client.stream(
                "GET", f"{hub.url}/acp", headers={**stream_headers, "Last-Event-ID": str(seen[-1])}
            ) as again:
                replayed: list[int] = []
                async for event_id, message in sse_events(again):
                    if event_id is not None:
                        replayed.append(int(event_id))
                        assert _sequence(message) == int(event_id)
                    if replayed and replayed[-1] == last:
                        break
            # The session stream picks up after the last event it gave, in order, none twice, through the last one
            # (not every event is a message: a status change tells ACP nothing), every one the connection stream
            # carried meanwhile included.
            assert replayed == sorted(set(replayed)) and replayed[0] > seen[-1] and replayed[-1] == last
            assert {sequence for sequence in whole_sequences if sequence > seen[-1]} <= set(replayed)
            # While the session had its own stream, its events went there only: none reached both streams.
            assert not set(seen) & set(whole_sequences)
            assert whole_sequences == sorted(set(whole_sequences))  # the connection stream: each once


async def test_a_load_on_the_connection_stream_replays_what_the_same_connection_already_saw(tmp_path: Path) -> None:
    """A client that reads only the connection stream (the RFD's single-stream profile) and loads a session it
    followed before gets the session's history again before the load's answer: a replay it asked for is not taken
    for a duplicate."""
    with hub_process(tmp_path, "--mock", "turn") as hub:
        async with httpx.AsyncClient(timeout=30) as client:
            connection, post = await _connect(client, hub)
            async with client.stream("GET", f"{hub.url}/acp", headers=hub.headers(**SSE, **connection)) as whole:
                everything = sse_events(whole)
                session = await _new_session(post, everything, tmp_path)
                scoped = {"Acp-Session-Id": session}
                prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
                await post(call(2, "session/prompt", prompt), **scoped)
                first: list[int] = []
                async for _, message in everything:
                    if message.get("method") == "session/request_permission":
                        reply = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
                        await post({"jsonrpc": "2.0", "id": message["id"], "result": reply}, **scoped)
                    elif (sequence := _sequence(message)) is not None and message.get("method") == "session/update":
                        first.append(sequence)
                    if message.get("id") == 2:
                        break
                load = {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
                await post(call(3, "session/load", load), **scoped)
                replayed: list[int] = []
                async for _, message in everything:
                    if message.get("method") == "session/update" and (sequence := _sequence(message)) is not None:
                        replayed.append(sequence)
                    if message.get("id") == 3:
                        assert "result" in message, message
                        break
            assert first and replayed[-len(first) :] == first, (first, replayed)

"""`omniagent acp` answers `initialize` without importing the engine's store, httpx, rich or pydantic (issue 11), and
before the ACP models, asyncio or the runtime (issue 33: every agent is served through the hub, which the process
builds once the answer is out): a real process, its imports read from outside with `-X importtime`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.face_imports import imported_before_reply, run_face, run_face_lines, run_face_raw

HEAVY = ("omniagent.engine.store", "omniagent.engine.engine", "httpx", "rich", "pydantic")
# The ACP models are cheap now, yet the answer needs none of them: the connection imports them after it.
MODELS = ("omniagent.protocols.acp.v1", "omniagent.protocols.acp.v2")


async def test_initialize_is_answered_before_the_engine_store_httpx_rich_or_pydantic_are_imported(
    tmp_path: Path,
) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    replies, imported = await run_face("acp", tmp_path, request)
    assert replies[0]["id"] == 1 and replies[0]["result"]["protocolVersion"] == 1
    assert "omniagent.faces.acp.serve" in imported  # the probe reads what it thinks it reads
    for heavy in HEAVY:
        assert heavy not in imported, f"{heavy} was imported to answer initialize"
    assert not (tmp_path / "engine.sqlite3").exists()  # nor was the store opened


async def test_initialize_is_answered_before_asyncio_is_imported(tmp_path: Path) -> None:
    """asyncio is most of a bare Python start: the first reply goes out before it is imported, and before logging;
    without a providers.json, before msgspec and the catalog too."""
    request = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": 2}}
    reply, before = await imported_before_reply("acp", tmp_path, request)
    assert reply["id"] == 7 and reply["result"]["protocolVersion"] == 2
    assert "omniagent.serving.acp.handshake" in before  # the probe reads what it thinks it reads
    late = ("asyncio", "logging", "msgspec", "omniagent.engine.providers.catalog.table", "omniagent.wire.jsonrpc")
    for module in (*late, *MODELS, "omniagent.faces.acp.any_agent", "omniagent.runtime.runtime"):
        assert module not in before, f"{module} was imported before the initialize reply"


async def test_a_first_line_the_early_answer_does_not_take_reaches_the_peer_whole(tmp_path: Path) -> None:
    """A first line that is not a request (here not JSON) is left to the connection's peer with every byte read:
    it answers the parse error, then the `initialize` that came in the same write."""
    good = {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": 1}}
    replies, _ = await run_face_lines("acp", tmp_path, [b"{not json", json.dumps(good).encode()])
    assert replies[0]["id"] is None and replies[0]["error"]["code"] == -32700
    assert replies[1]["id"] == 2 and replies[1]["result"]["protocolVersion"] == 1


async def test_the_version_an_early_initialize_chose_holds_for_the_connection(tmp_path: Path) -> None:
    """The first `initialize` (answered before the event loop) fixes the version; a second one, answered by the
    peer, is answered in it, and the version's methods are routed (`session/list` answers)."""
    first = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    second = {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": 2}}
    listing = {"jsonrpc": "2.0", "id": 3, "method": "session/list", "params": {}}
    replies, _ = await run_face("acp", tmp_path, first, second, listing)
    assert [r["id"] for r in replies] == [1, 2, 3]
    assert replies[0]["result"]["protocolVersion"] == 1
    assert replies[1]["result"]["protocolVersion"] == 1
    assert replies[2]["result"]["sessions"] == []


async def test_an_initialize_answered_early_is_the_bytes_the_connection_answers(tmp_path: Path) -> None:
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    lines = await run_face_raw("acp", tmp_path, [request.encode(), request.encode()])
    assert len(lines) == 2 and lines[0] == lines[1]

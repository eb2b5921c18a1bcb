"""`omniagent rpc` answers `initialize` without importing the engine's store, httpx, rich or pydantic (issue 11): a
real process, its imports read from outside with `-X importtime`; then the first other request opens the engine."""

from __future__ import annotations

from pathlib import Path

from tests.face_imports import imported_before_reply, run_face, run_face_raw

# The engine and what it brings, and the method table with every yuke model: none is needed for `initialize`.
HEAVY = (
    "omniagent.engine.store",
    "omniagent.engine.engine",
    "httpx",
    "rich",
    "pydantic",
    "omniagent.protocols.yuke.methods",
)


async def test_initialize_is_answered_before_the_engine_store_httpx_rich_or_pydantic_are_imported(
    tmp_path: Path,
) -> None:
    replies, imported = await run_face("rpc", tmp_path, {"id": "1", "method": "initialize"})
    assert replies[0]["id"] == "1" and replies[0]["result"]["session_revision"] == 0
    for heavy in HEAVY:
        assert heavy not in imported, f"{heavy} was imported to answer initialize"
    assert not (tmp_path / "engine.sqlite3").exists()  # nor was the store opened


async def test_the_first_other_request_opens_the_engine_and_initialize_answers_the_same(tmp_path: Path) -> None:
    replies, imported = await run_face(
        "rpc",
        tmp_path,
        {"id": "1", "method": "initialize"},
        {"id": "2", "method": "session.list"},
        {"id": "3", "method": "initialize"},
    )
    assert [r["id"] for r in replies] == ["1", "2", "3"]
    assert replies[1]["result"] == {"revision": 0, "items": [], "total": 0}
    assert replies[2]["result"] == replies[0]["result"]  # the catalog and the revision, before and after
    assert "omniagent.engine.engine" in imported and (tmp_path / "engine.sqlite3").exists()


async def test_an_engine_that_cannot_open_answers_each_request_with_an_internal_error(tmp_path: Path) -> None:
    """The engine opens on first use, so a store that cannot be opened is an error reply, not a dead process."""
    data = tmp_path / "a-file"
    data.write_text("not a directory")
    replies, _ = await run_face(
        "rpc", data, {"id": "1", "method": "session.list"}, {"id": "2", "method": "catalog.list"}
    )
    assert [r["id"] for r in replies] == ["1", "2"]
    for reply in replies:
        assert reply["error"] == {"code": -32603, "message": "the engine did not open"}


async def test_initialize_is_answered_before_asyncio_is_imported_and_as_the_face_answers_it(tmp_path: Path) -> None:
    """The first `initialize` goes out before asyncio (and the engine's face) is imported; a second one, answered by
    the face, is the same bytes but for the id."""
    reply, before = await imported_before_reply("rpc", tmp_path, {"id": "1", "method": "initialize", "params": {}})
    assert reply["id"] == "1" and reply["result"]["session_revision"] == 0
    assert "omniagent.engine.handshake" in before  # the probe reads what it thinks it reads
    for module in ("asyncio", "logging", "omniagent.faces.rpc.connection"):
        assert module not in before, f"{module} was imported before the initialize reply"
    lines = await run_face_raw(
        "rpc", tmp_path, [b'{"id":"1","method":"initialize"}', b'{"id":"1","method":"initialize"}']
    )
    assert len(lines) == 2 and lines[0] == lines[1]


async def test_a_first_initialize_with_bad_params_is_answered_by_the_face(tmp_path: Path) -> None:
    """Params `initialize` refuses (an array) are not answered early: the face answers them, in its shape."""
    replies, _ = await run_face("rpc", tmp_path, {"id": "1", "method": "initialize", "params": [1]})
    assert replies == [{"id": "1", "error": {"code": -32602, "message": "bad parameters"}}]

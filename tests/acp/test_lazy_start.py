"""`omniagent acp` answers `initialize` without importing the engine's store, httpx, rich or pydantic (issue 11): a
real process, its imports read from outside with `-X importtime`."""

from __future__ import annotations

from pathlib import Path

from tests.face_imports import run_face

HEAVY = ("omniagent.engine.store", "omniagent.engine.engine", "httpx", "rich", "pydantic")
# The ACP models are cheap now, yet the answer needs none of them.
MODELS = ("omniagent.protocols.acp.v1", "omniagent.protocols.acp.v2")


async def test_initialize_is_answered_before_the_engine_store_httpx_rich_or_pydantic_are_imported(
    tmp_path: Path,
) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    replies, imported = await run_face("acp", tmp_path, request)
    assert replies[0]["id"] == 1 and replies[0]["result"]["protocolVersion"] == 1
    assert "omniagent.acp.serve" in imported  # the probe reads what it thinks it reads
    for heavy in HEAVY + MODELS:
        assert heavy not in imported, f"{heavy} was imported to answer initialize"
    assert not (tmp_path / "engine.sqlite3").exists()  # nor was the store opened

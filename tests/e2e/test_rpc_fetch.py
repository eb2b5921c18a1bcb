"""Web fetch over a real `omniagent rpc` (issue 13, part 4): a page served on 127.0.0.1 comes back as text when the
session allows its private network (`session.set_sandbox{fetch_private}`), after the user allowed the call; a
private address is refused by default; the size limit holds."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from omniagent.engine.sandboxes import SET_SANDBOX_METHOD
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.engine.rpc_harness import RpcProcess, write_providers
from tests.pages import serving

PAGE = b"<html><head><title>Docs</title></head><body><h1>Docs</h1><p>The answer is <b>42</b>.</p></body></html>"
BIG = b"y" * 3 * 1024 * 1024  # more than the 2 MiB fetch reads


@pytest.fixture
def site() -> Iterator[str]:
    """An HTTP server on 127.0.0.1 with `/docs` (a small HTML page) and `/big` (3 MiB of text); its origin."""
    answers = {"/docs": (200, {"content-type": "text/html"}, PAGE), "/big": (200, {"content-type": "text/plain"}, BIG)}
    with serving(answers) as pages:
        yield pages.url("")


def _fetch_then_text(url: str) -> list[Reply]:
    return [Reply(tool_calls=(FakeToolCall("fetch", {"url": url}, "call_f"),)), Reply(text="Read it.")]


async def _turn(rpc: RpcProcess, ws: Path, *, private: bool, answer: bool = False) -> str:
    """One session (fetch_private as given), one turn; allows the fetch when asked (`answer`), else runs in auto."""
    created = await rpc.call("session.create", {"workspace_path": str(ws), "model": "fake-anthropic/fake-model"})
    sid = created["session"]["id"]
    result = await rpc.call(SET_SANDBOX_METHOD, {"session_id": sid, "fetch_private": private})
    assert result["fetch_private"] is private
    if not answer:
        await rpc.call("session.set_permission_mode", {"session_id": sid, "mode": "auto"})
    start = len(rpc.lines)
    content = [{"type": "text", "text": "read the page"}]
    await rpc.call("session.send_input", {"session_id": sid, "input": {"type": "content", "content": content}})
    if answer:
        asked = rpc.lines[await rpc.broadcast("interaction.requested", after=start)]["params"]
        assert asked["request"] == {
            "type": "confirm",
            "title": "Fetch a web page?",
            "message": asked["request"]["message"],
        }
        respond = {"interaction_id": asked["interaction_id"], "response": {"type": "confirm", "value": True}}
        await rpc.call("interaction.respond", respond)
    done = await rpc.broadcast("run.done", after=start, within=15.0)
    assert rpc.lines[done]["params"]["outcome"]["type"] == "turn"
    return str(sid)


def _tool_result(llm: FakeLLMServer, request: int) -> dict[str, Any]:
    body = llm.requests[request].body
    assert isinstance(body, dict)
    result: dict[str, Any] = body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    return result


async def test_a_loopback_page_comes_back_as_text_when_the_session_allows_it(tmp_path: Path, site: str) -> None:
    async with FakeLLMServer(Scenario(_fetch_then_text(f"{site}/docs"))) as llm:
        write_providers(tmp_path / "data", llm)
        rpc = await RpcProcess.start(tmp_path / "data")
        try:
            (tmp_path / "ws").mkdir()
            await _turn(rpc, tmp_path / "ws", private=True, answer=True)
        finally:
            assert await rpc.close() == 0
    result = _tool_result(llm, 1)
    assert "is_error" not in result
    assert result["content"] == f"{site}/docs (200 OK, text/html)\n\n# Docs\n\nThe answer is 42."


async def test_a_private_address_is_refused_by_default_and_the_size_limit_holds(tmp_path: Path, site: str) -> None:
    steps = [*_fetch_then_text(f"{site}/docs"), *_fetch_then_text(f"{site}/big")]
    async with FakeLLMServer(Scenario(steps)) as llm:
        write_providers(tmp_path / "data", llm)
        rpc = await RpcProcess.start(tmp_path / "data")
        try:
            (tmp_path / "ws").mkdir()
            await _turn(rpc, tmp_path / "ws", private=False)
            await _turn(rpc, tmp_path / "ws", private=True)
        finally:
            assert await rpc.close() == 0
    refused = _tool_result(llm, 1)
    assert refused["is_error"] is True
    assert refused["content"] == (
        "127.0.0.1 is a private or loopback address, which fetch reaches only when the session allows its private "
        "network"
    )
    big = _tool_result(llm, 3)["content"]
    head, text, *notes = big.split("\n\n")
    assert head == f"{site}/big (200 OK, text/plain)" and text == "y" * 64 * 1024
    assert notes == [
        "[the page is larger than 2097152 bytes; only the first ones were read]",
        "[the text is cut at 65536 of 2097152 characters]",
    ]
    assert len(json.dumps(llm.requests[3].body)) < 100_000

"""session.* methods over a real `omniagent rpc` subprocess."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.testing import FakeLLMServer, Reply, Scenario
from tests.engine.rpc_harness import RpcProcess, write_providers

# Each test runs on both stores: SQLite, and a fresh PostgreSQL database (conftest.py `each_store`).
pytestmark = pytest.mark.usefixtures("each_store")


MODEL = "fake-anthropic/fake-model"


async def _engine(tmp_path: Path, llm: FakeLLMServer) -> tuple[RpcProcess, Path]:
    write_providers(tmp_path / "data", llm)
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return await RpcProcess.start(tmp_path / "data"), workspace


async def test_create_canonicalizes_the_workspace_and_refuses_bad_ones(tmp_path: Path) -> None:
    """session.create: absolute path required, canonical root, unknown model / reasoning refused."""
    async with FakeLLMServer(Scenario()) as llm:
        rpc, workspace = await _engine(tmp_path, llm)
        (tmp_path / "link").symlink_to(workspace)
        result = await rpc.call(
            "session.create",
            {
                "workspace_path": str(tmp_path / "link"),
                "model": MODEL,
                "reasoning": "high",
                "system_prompt": "Work in ${workspace}.",
                "max_rounds": 3,
                "profile": "p1",
            },
        )
        session = result["session"]
        assert session["root"] == str(workspace.resolve())
        assert (session["reasoning"], session["max_rounds"], session["profile"]) == ("high", 3, "p1")
        config = await rpc.call("session.config", {"session_id": session["id"]})
        assert config["system_prompt"] == f"Work in {workspace.resolve()}."
        codes = [
            await rpc.call_error("session.create", {"workspace_path": "relative/path", "model": MODEL}),
            await rpc.call_error("session.create", {"workspace_path": str(tmp_path / "missing"), "model": MODEL}),
            await rpc.call_error("session.create", {"workspace_path": str(workspace), "model": "nope/nope"}),
            await rpc.call_error(
                "session.create", {"workspace_path": str(workspace), "model": MODEL, "reasoning": "ultra"}
            ),
            await rpc.call_error(
                "session.create", {"workspace_path": str(workspace), "model": MODEL, "system_prompt": "${nope}"}
            ),
        ]
        assert codes == [
            ErrorCode.BAD_REQUEST,
            ErrorCode.BAD_REQUEST,
            ErrorCode.UNSUPPORTED_MODEL,
            ErrorCode.UNSUPPORTED_REASONING,
            ErrorCode.BAD_REQUEST,
        ]
        assert await rpc.close() == 0


async def test_list_pages_with_a_cursor_bound_to_its_population(tmp_path: Path) -> None:
    """session.list: `updated_at_ms DESC, id DESC`, limit clamp, opaque cursor, total, stale cursor."""
    async with FakeLLMServer(Scenario()) as llm:
        rpc, workspace = await _engine(tmp_path, llm)
        ids = [
            (await rpc.call("session.create", {"workspace_path": str(workspace), "model": MODEL}))["session"]["id"]
            for _ in range(5)
        ]
        first = await rpc.call("session.list", {"limit": 2})
        assert first["total"] == 5 and len(first["items"]) == 2 and first["revision"] == 5
        second = await rpc.call("session.list", {"limit": 2, "cursor": first["next_cursor"]})
        third = await rpc.call("session.list", {"limit": 2, "cursor": second["next_cursor"]})
        assert "next_cursor" not in third
        seen = [item["session"]["id"] for page in (first, second, third) for item in page["items"]]
        assert sorted(seen) == sorted(ids) and len(set(seen)) == 5
        assert all(item["activity"]["state"] == {"type": "idle"} for item in first["items"])
        assert await rpc.call_error("session.list", {"cursor": "garbage!"}) == ErrorCode.STALE_CURSOR
        assert (
            await rpc.call_error("session.list", {"population": {"type": "all"}, "cursor": first["next_cursor"]})
            == ErrorCode.STALE_CURSOR
        )
        assert (await rpc.call("session.list", {"population": {"type": "children", "parent_id": ids[0]}}))["total"] == 0
        assert await rpc.close() == 0


async def test_patch_writes_a_new_config_revision_and_history_pages_backwards(tmp_path: Path) -> None:
    """session.patch / session.config / session.history: config.changed with a seq, old revisions stay
    readable, history returns ids < before oldest first with has_more."""
    async with FakeLLMServer(Scenario(fallback=Reply(text="ok"))) as llm:
        rpc, workspace = await _engine(tmp_path, llm)
        sid = (await rpc.call("session.create", {"workspace_path": str(workspace), "model": MODEL}))["session"]["id"]
        for i in range(3):
            await rpc.call(
                "session.send_input",
                {"session_id": sid, "input": {"type": "content", "content": [{"type": "text", "text": f"q{i}"}]}},
            )
            await rpc.broadcast("run.done", where=lambda p, i=i: p["run_id"] == i + 1)
        patched = await rpc.call("session.patch", {"session_id": sid, "patch": {"reasoning": "low"}})
        assert patched["session"]["config_rev"] == 1 and patched["session"]["reasoning"] == "low"
        changed = rpc.lines[await rpc.broadcast("config.changed")]["params"]
        assert changed["config"] == {"config_rev": 1, "model": MODEL, "reasoning": "low"} and changed["seq"] > 1
        assert (await rpc.call("session.config", {"session_id": sid, "config_rev": 0}))["config"]["reasoning"] == "off"
        assert (
            await rpc.call_error("session.config", {"session_id": sid, "config_rev": 9}) == ErrorCode.UNKNOWN_CONFIG_REV
        )
        assert await rpc.call_error("session.patch", {"session_id": sid, "patch": {}}) == ErrorCode.INVALID_PATCH
        newest = await rpc.call("session.history", {"session_id": sid, "before_message_id": 2**53 - 1, "limit": 4})
        assert [m["id"] for m in newest["messages"]] == [3, 4, 5, 6] and newest["has_more"]
        assert newest["configs"] == [{"config_rev": 0, "model": MODEL, "reasoning": "off"}]
        older = await rpc.call("session.history", {"session_id": sid, "before_message_id": 3, "limit": 4})
        assert [m["id"] for m in older["messages"]] == [1, 2] and not older["has_more"]
        assert await rpc.close() == 0


async def test_session_events_replays_the_durable_broadcasts_in_pages_by_seq(tmp_path: Path) -> None:
    """The `session.events` extension: after any `seq`, the session's logged events exactly as their broadcast lines
    carried them, in order, in pages; an unknown session is unknown_session."""
    async with FakeLLMServer(Scenario(fallback=Reply(text="ok"))) as llm:
        rpc, workspace = await _engine(tmp_path, llm)
        sid = (await rpc.call("session.create", {"workspace_path": str(workspace), "model": MODEL}))["session"]["id"]
        for i in range(2):
            content = {"type": "content", "content": [{"type": "text", "text": f"q{i}"}]}
            await rpc.call("session.send_input", {"session_id": sid, "input": content})
            await rpc.broadcast("run.done", where=lambda p, i=i: p["run_id"] == i + 1)
        seen = [
            {"method": line["method"], "params": line["params"]}
            for line in rpc.lines
            if "seq" in line.get("params", {}) and line["params"].get("session_id") == sid
        ]
        assert [e["params"]["seq"] for e in seen] == list(range(1, len(seen) + 1))
        whole = await rpc.call("session.events", {"session_id": sid})
        assert whole == {"events": seen, "has_more": False}
        page = await rpc.call("session.events", {"session_id": sid, "after_seq": 2, "limit": 3})
        assert page == {"events": seen[2:5], "has_more": True}
        assert await rpc.call("session.events", {"session_id": sid, "after_seq": len(seen)}) == {
            "events": [],
            "has_more": False,
        }
        assert await rpc.call_error("session.events", {"session_id": "0" * 32}) == ErrorCode.UNKNOWN_SESSION
        assert await rpc.close() == 0


async def test_remove_drops_the_session_and_unknown_ids_are_unknown_session(tmp_path: Path) -> None:
    """session.remove: `session.removed` with a new revision; later calls answer unknown_session."""
    async with FakeLLMServer(Scenario()) as llm:
        rpc, workspace = await _engine(tmp_path, llm)
        sid = (await rpc.call("session.create", {"workspace_path": str(workspace), "model": MODEL}))["session"]["id"]
        assert await rpc.call("session.remove", {"session_id": sid}) == {}
        removed = rpc.lines[await rpc.broadcast("session.removed")]["params"]
        assert removed == {"revision": 2, "session_id": sid}
        for method in ("session.get", "session.remove", "session.queue"):
            assert await rpc.call_error(method, {"session_id": sid}) == ErrorCode.UNKNOWN_SESSION
        assert (await rpc.call("session.list"))["total"] == 0
        assert await rpc.close() == 0


async def test_media_inputs_are_refused(tmp_path: Path) -> None:
    """A blob content part is refused (no blob store). Skills: test_rpc_skills.py."""
    async with FakeLLMServer(Scenario()) as llm:
        rpc, workspace = await _engine(tmp_path, llm)
        sid = (await rpc.call("session.create", {"workspace_path": str(workspace), "model": MODEL}))["session"]["id"]
        image = {
            "type": "content",
            "content": [
                {"type": "image", "source": {"type": "blob", "hash": "a" * 64, "mime": "image/png", "bytes": 3}}
            ],
        }
        assert await rpc.call_error("session.send_input", {"session_id": sid, "input": image}) == ErrorCode.BAD_REQUEST
        assert await rpc.close() == 0


async def test_create_with_initial_input_starts_the_first_run_at_once(tmp_path: Path) -> None:
    """session.create: `initial_input` is admitted like send_input, so the session's first run starts
    without another request and completes against the provider."""
    async with FakeLLMServer(Scenario()) as llm:
        llm.enqueue(Reply(text="Hello from the first run."))
        rpc, workspace = await _engine(tmp_path, llm)
        initial = {"type": "content", "content": [{"type": "text", "text": "say hello"}]}
        result = await rpc.call(
            "session.create", {"workspace_path": str(workspace), "model": MODEL, "initial_input": initial}
        )
        sid = result["session"]["id"]
        done = await rpc.broadcast("run.done", where=lambda p: p["session_id"] == sid)
        assert rpc.lines[done]["params"]["outcome"] == {"type": "turn", "finish": "stop", "rounds": 1}
        history = await rpc.call("session.history", {"session_id": sid, "before_message_id": 2**53 - 1})
        texts = [part.get("text") for message in history["messages"] for part in message["content"]]
        assert "Hello from the first run." in texts
        assert llm.requests[0].body["messages"][0]["content"][0]["text"] == "say hello"
        assert await rpc.close() == 0

"""The yuke envelope and its error codes over a real `omniagent rpc` subprocess."""

from __future__ import annotations

from pathlib import Path

from omniagent.engine.engine import Engine, EngineConfig
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.methods import METHODS
from tests.engine.rpc_harness import RpcProcess


async def test_initialize_reports_protocol_one_and_the_engine_version(tmp_path: Path) -> None:
    """`initialize` is optional, takes empty params and returns `protocol: 1`."""
    rpc = await RpcProcess.start(tmp_path)
    result = await rpc.call("initialize")
    assert result["protocol"] == 1
    assert result["engine"]["version"]
    assert len(result["catalog_rev"]) == 128
    assert await rpc.close() == 0


async def test_unknown_method_is_answered_with_unknown_method(tmp_path: Path) -> None:
    """An unknown method gets -32601 with the request's id."""
    rpc = await RpcProcess.start(tmp_path)
    assert await rpc.call_error("session.nope", {}) == ErrorCode.UNKNOWN_METHOD
    assert await rpc.close() == 0


async def test_bad_params_are_answered_with_bad_request_and_the_loop_goes_on(tmp_path: Path) -> None:
    """A missing field, a wrong type, a bad enum tag or a bad hex id is -32602."""
    rpc = await RpcProcess.start(tmp_path)
    assert await rpc.call_error("session.get", {}) == ErrorCode.BAD_REQUEST
    assert await rpc.call_error("session.get", {"session_id": "ABCDEF"}) == ErrorCode.BAD_REQUEST
    assert await rpc.call_error("session.list", {"population": {"type": "nope"}}) == ErrorCode.BAD_REQUEST
    assert await rpc.call_error("session.list", {"limit": "5"}) == ErrorCode.BAD_REQUEST
    assert await rpc.call_error("session.list", []) == ErrorCode.BAD_REQUEST  # type: ignore[arg-type]
    assert (await rpc.call("session.list"))["total"] == 0
    assert await rpc.close() == 0


async def test_a_non_string_id_is_answered_with_an_empty_id(tmp_path: Path) -> None:
    """A non-string id (e.g. 7) is -32602 with `id: ""`."""
    rpc = await RpcProcess.start(tmp_path)
    rpc.send_raw(b'{"id":7,"method":"session.list"}\n')
    line = rpc.lines[await rpc.wait_for(lambda line: "error" in line)]
    assert line == {"id": "", "error": {"code": ErrorCode.BAD_REQUEST, "message": line["error"]["message"]}}
    assert await rpc.close() == 0


async def test_a_line_that_is_not_json_or_not_a_request_gets_bad_request_and_the_loop_goes_on(tmp_path: Path) -> None:
    """Parse errors and non-request lines are -32602 with `id: ""` (no -32700)."""
    rpc = await RpcProcess.start(tmp_path)
    rpc.send_raw(b'this is not json\n[1,2]\n{"id":"x"}\n')
    await rpc.wait_for(lambda line: line.get("id") == "", after=2)
    assert [line["error"]["code"] for line in rpc.lines[:3]] == [ErrorCode.BAD_REQUEST] * 3
    assert (await rpc.call("initialize"))["protocol"] == 1
    assert await rpc.close() == 0


async def test_a_request_without_id_runs_but_gets_no_response(tmp_path: Path) -> None:
    """A line without id is a notification: executed, never answered (not even with an error)."""
    rpc = await RpcProcess.start(tmp_path)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    rpc.send_raw(b'{"method":"session.nope"}\n')
    rpc.send_raw(
        b'{"method":"session.create","params":{"workspace_path":"%s","model":"anthropic/claude-sonnet-4-5"}}\n'
        % str(workspace).encode()
    )
    await rpc.broadcast("session.summary_changed")
    result = await rpc.call("session.list")
    assert result["total"] == 1
    assert all("id" not in line or line["id"].startswith("req-") for line in rpc.lines)
    assert await rpc.close() == 0


async def test_jsonrpc_member_is_accepted_and_never_sent(tmp_path: Path) -> None:
    """`"jsonrpc":"2.0"` is neither sent nor required; we accept and ignore it."""
    rpc = await RpcProcess.start(tmp_path)
    rpc.methods_by_id["j"] = "initialize"
    rpc.send_raw(b'{"jsonrpc":"2.0","id":"j","method":"initialize"}\n')
    assert (await rpc.response("j"))["result"]["protocol"] == 1
    assert await rpc.close() == 0


async def test_every_method_of_the_protocol_is_served(tmp_path: Path) -> None:
    """The engine serves every method of the protocol (none answers -31022 not_implemented); the
    agents.* methods answer over the wire too (an absent agents.json reads as `{}`)."""
    async with Engine.open(EngineConfig(data_dir=tmp_path, config_dir=tmp_path)) as engine:
        assert [method for method in METHODS if not engine.serves(method)] == []
    rpc = await RpcProcess.start(tmp_path)
    assert (await rpc.call("agents.get"))["config"] == {"models": {}}
    assert await rpc.call_error("agents.set_model", {"session_id": "0" * 32}) == ErrorCode.BAD_REQUEST
    assert await rpc.close() == 0

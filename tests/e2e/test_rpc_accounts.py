"""catalog.* and auth.* over a real `omniagent rpc` subprocess (docs/engine.md "Providers and keys")."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.testing import FakeLLMServer, Reply, Scenario, fingerprint
from tests.engine.rpc_harness import RpcProcess, write_providers

SECRET = "sk-test-very-secret-value-1234"


async def test_catalog_list_is_unchanged_for_the_current_revision_and_reload_reports_changes(tmp_path: Path) -> None:
    """catalog.list / catalog.reload: `unchanged` for the current rev; a changed file moves the rev and
    broadcasts catalog.changed; a bad file keeps the catalog and fails with internal."""
    async with FakeLLMServer(Scenario()) as llm:
        data = tmp_path / "data"
        write_providers(data, llm)
        rpc = await RpcProcess.start(data)
        full = await rpc.call("catalog.list")
        assert full["type"] == "full"
        by_id = {p["id"]: p["state"] for p in full["providers"]}
        assert by_id["fake-anthropic"] == "ready" and by_id["anthropic"] == "needs_credential"
        model = next(m for m in full["models"] if m["selector"] == "fake-chat/fake-model")
        assert model["cost"] == {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}
        assert model["reasoning_levels"] == ["off", "low", "high"]
        assert await rpc.call("catalog.list", {"since_rev": full["catalog_rev"]}) == {
            "type": "unchanged",
            "catalog_rev": full["catalog_rev"],
        }
        assert await rpc.call("catalog.reload") == {"catalog_rev": full["catalog_rev"], "changed": False}
        document = json.loads((data / "providers.json").read_text())
        document["providers"].pop()
        (data / "providers.json").write_text(json.dumps(document))
        reloaded = await rpc.call("catalog.reload")
        assert reloaded["changed"] and reloaded["catalog_rev"] != full["catalog_rev"]
        await rpc.broadcast("catalog.changed")
        (data / "providers.json").write_text("{not json")
        assert await rpc.call_error("catalog.reload") == ErrorCode.INTERNAL
        assert (await rpc.call("catalog.list"))["catalog_rev"] == reloaded["catalog_rev"]
        assert await rpc.close() == 0


async def test_an_api_key_set_over_the_wire_is_stored_0600_used_and_never_echoed(tmp_path: Path) -> None:
    """docs/providers.md "API keys": keys live in a 0600 file and never appear on any wire or log; auth.changed and
    catalog.changed follow a state change; the key reaches the provider in its header."""
    async with FakeLLMServer(Scenario(fallback=Reply(text="hi"))) as llm:
        data = tmp_path / "data"
        write_providers(data, llm)
        document = json.loads((data / "providers.json").read_text())
        for entry in document["providers"]:
            entry.pop("api_key")
            entry["auth"] = {"api_key": {"source": {"env": "OMNIAGENT_TEST_UNSET_KEY"}}}
        (data / "providers.json").write_text(json.dumps(document))
        rpc = await RpcProcess.start(data)
        before = {p["provider_id"]: p for p in (await rpc.call("auth.list"))["providers"]}
        assert before["fake-chat"] == {"provider_id": "fake-chat", "can_login": False}
        assert await rpc.call("auth.set_api_key", {"provider_id": "fake-chat", "api_key": SECRET}) == {}
        changed = rpc.lines[await rpc.broadcast("auth.changed")]["params"]
        assert changed["provider"] == {"provider_id": "fake-chat", "credential_kind": "api_key", "can_login": False}
        await rpc.broadcast("catalog.changed")
        key_file = data / "credentials.json"
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        workspace = tmp_path / "ws"
        workspace.mkdir()
        sid = (await rpc.call("session.create", {"workspace_path": str(workspace), "model": "fake-chat/fake-model"}))[
            "session"
        ]["id"]
        await rpc.call(
            "session.send_input",
            {"session_id": sid, "input": {"type": "content", "content": [{"type": "text", "text": "hello"}]}},
        )
        await rpc.broadcast("run.done")
        assert llm.requests[-1].credential == fingerprint(SECRET)
        codes = [
            await rpc.call_error("auth.set_api_key", {"provider_id": "nope", "api_key": "k"}),
            await rpc.call_error("auth.set_api_key", {"provider_id": "fake-chat", "api_key": "  "}),
            await rpc.call_error("auth.set_api_key", {"provider_id": "a/b", "api_key": "k"}),
            await rpc.call_error("auth.login", {"provider_id": "fake-chat"}),
        ]
        assert codes == [
            ErrorCode.UNKNOWN_PROVIDER,
            ErrorCode.BAD_REQUEST,
            ErrorCode.BAD_REQUEST,
            ErrorCode.BAD_REQUEST,  # fake-chat offers no device login (test_rpc_login.py has the ones that do)
        ]
        assert await rpc.call("auth.remove", {"provider_id": "fake-chat"}) == {}
        after = {p["provider_id"]: p for p in (await rpc.call("auth.list"))["providers"]}
        assert "credential_kind" not in after["fake-chat"]
        assert await rpc.close() == 0
        stderr = await rpc.stderr()
    assert all(SECRET not in json.dumps(line) for line in rpc.lines)
    assert SECRET not in stderr

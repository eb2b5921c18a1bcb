"""Device login over a real `omniagent rpc` subprocess (docs/engine.md, "Device login"): the built-in GitHub
Copilot provider pointed by providers.json at a fake device-auth server on 127.0.0.1, and its API at the fake LLM.
A login succeeds (the grant stored 0600, the provider ready, a turn sent with the exchanged token, which is
renewed), is canceled, or fails (denied, expired, no access); the URL and code appear only in the answer to the
connection that asked, and no token appears on the wire or in the log."""

from __future__ import annotations

import json
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.testing import ErrorReply, FakeDeviceAuthServer, FakeLLMServer, Reply, Scenario, fingerprint
from tests.engine.rpc_harness import RpcProcess

PROVIDER = "github-copilot"
MODEL = f"{PROVIDER}/gpt-4.1"
TEXT = {"type": "content", "content": [{"type": "text", "text": "hello"}]}


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLMServer]:
    async with FakeLLMServer(Scenario(fallback=Reply(text="hi from copilot"))) as server:
        yield server


def _providers(data: Path, oauth: dict[str, str]) -> None:
    data.mkdir(parents=True, exist_ok=True)
    path = data / "providers.json"
    path.write_text(json.dumps({"providers": [{"id": PROVIDER, "auth": {"oauth": oauth}}]}))
    path.chmod(0o600)


async def _engine(tmp_path: Path, auth: FakeDeviceAuthServer) -> RpcProcess:
    _providers(tmp_path / "data", auth.oauth_entry())
    return await RpcProcess.start(tmp_path / "data", {"OMNIAGENT_LOG": "debug"})


def _auth_of(result: dict[str, Any]) -> dict[str, Any]:
    return next(p for p in result["providers"] if p["provider_id"] == PROVIDER)


async def _finished(rpc: RpcProcess, after: int = 0) -> dict[str, Any]:
    return dict(rpc.lines[await rpc.broadcast("auth.login_finished", after=after)]["params"])


async def _turn(rpc: RpcProcess, workspace: str) -> None:
    sid = (await rpc.call("session.create", {"workspace_path": workspace, "model": MODEL}))["session"]["id"]
    start = len(rpc.lines)
    await rpc.call("session.send_input", {"session_id": sid, "input": TEXT})
    done = rpc.lines[await rpc.broadcast("run.done", after=start)]["params"]
    assert done["outcome"]["type"] == "turn", done


def _assert_nowhere(rpc: RpcProcess, stderr: str, secrets: list[str], *, except_line: int | None = None) -> None:
    for index, line in enumerate(rpc.lines):
        if index != except_line:
            text = json.dumps(line)
            assert not [s for s in secrets if s in text], line
    assert not [s for s in secrets if s in stderr]


async def test_a_device_login_stores_a_private_grant_and_the_provider_runs_a_turn_with_it(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    async with FakeDeviceAuthServer(api_base=llm.url) as auth:
        rpc = await _engine(tmp_path, auth)
        assert _auth_of(await rpc.call("auth.list")) == {"provider_id": PROVIDER, "can_login": True}
        states = {p["id"]: p["state"] for p in (await rpc.call("catalog.list"))["providers"]}
        assert states[PROVIDER] == "needs_credential"
        rid = rpc.send("auth.login", {"provider_id": PROVIDER})
        answer_index = await rpc.wait_for(lambda line: line.get("id") == rid)
        started = rpc.lines[answer_index]["result"]
        assert started["verification_url"] == auth.url + "/login/device" and started["user_code"] == auth.user_code
        assert len(started["login_id"]) == 64
        auth.approve()
        finished = await _finished(rpc)
        assert finished == {"login_id": started["login_id"], "provider_id": PROVIDER, "outcome": {"type": "succeeded"}}
        changed = rpc.lines[await rpc.broadcast("auth.changed")]["params"]["provider"]
        assert changed == {"provider_id": PROVIDER, "credential_kind": "oauth", "can_login": True}
        await rpc.broadcast("catalog.changed")
        grants = tmp_path / "data" / "logins.json"
        assert stat.S_IMODE(grants.stat().st_mode) == 0o600
        assert auth.oauth_tokens[0] in grants.read_text() and auth.api_tokens[0] in grants.read_text()
        states = {p["id"]: p["state"] for p in (await rpc.call("catalog.list"))["providers"]}
        assert states[PROVIDER] == "ready"
        await _turn(rpc, str(tmp_path))
        (request,) = await llm.wait_for_requests_async(1)
        assert request.path == "/chat/completions" and request.credential == fingerprint(auth.api_tokens[0])
        assert request.headers["copilot-integration-id"] == "vscode-chat"
        assert await rpc.close() == 0
        stderr = await rpc.stderr()
        secrets = [*auth.oauth_tokens, *auth.api_tokens, auth.device_code]
        _assert_nowhere(rpc, stderr, [*secrets, auth.user_code], except_line=answer_index)
        _assert_nowhere(rpc, stderr, secrets)


async def test_the_api_token_is_renewed_when_due_and_when_the_api_refuses_it(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """An API token past its `refresh_in` is exchanged anew before the request; a 401 from the API is answered by
    one more exchange and the same request again. Each new token is stored (0600)."""
    llm.enqueue(Reply(text="first"), ErrorReply(401, "authentication_error"), Reply(text="second"))
    async with FakeDeviceAuthServer(api_base=llm.url, api_refresh_in=0) as auth:
        rpc = await _engine(tmp_path, auth)
        await rpc.call("auth.login", {"provider_id": PROVIDER})
        auth.approve()
        assert (await _finished(rpc))["outcome"] == {"type": "succeeded"}
        await _turn(rpc, str(tmp_path))
        await _turn(rpc, str(tmp_path))
        first, refused, retried = await llm.wait_for_requests_async(3)
        assert len(auth.api_tokens) == 4  # the login's, then one per request: due each time, refused once
        assert first.credential == fingerprint(auth.api_tokens[1])
        assert refused.credential == fingerprint(auth.api_tokens[2])
        assert retried.credential == fingerprint(auth.api_tokens[3])
        grants = (tmp_path / "data" / "logins.json").read_text()
        assert auth.api_tokens[3] in grants and auth.api_tokens[0] not in grants
        assert await rpc.close() == 0


async def test_a_login_without_a_token_exchange_uses_and_refreshes_the_oauth_token(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """A provider whose OAuth token is the bearer: a 401 renews it with the refresh token."""
    llm.enqueue(ErrorReply(401, "authentication_error"), Reply(text="ok"))
    async with FakeDeviceAuthServer(refresh_tokens=True) as auth:
        data = tmp_path / "data"
        data.mkdir()
        entry = {
            "id": "lab",
            "base_url": llm.openai_base_url,
            "endpoints": [{"protocol": "openai_chat"}],
            "auth": {"oauth": auth.oauth_entry(exchange=False)},
            "models": [{"id": "m"}],
        }
        (data / "providers.json").write_text(json.dumps({"providers": [entry]}))
        (data / "providers.json").chmod(0o600)
        rpc = await RpcProcess.start(data)
        await rpc.call("auth.login", {"provider_id": "lab"})
        auth.approve()
        assert (await _finished(rpc))["outcome"] == {"type": "succeeded"}
        workspace = tmp_path / "ws"
        workspace.mkdir()
        sid = (await rpc.call("session.create", {"workspace_path": str(workspace), "model": "lab/m"}))["session"]["id"]
        await rpc.call("session.send_input", {"session_id": sid, "input": TEXT})
        assert rpc.lines[await rpc.broadcast("run.done")]["params"]["outcome"]["type"] == "turn"
        refused, retried = await llm.wait_for_requests_async(2)
        assert refused.credential == fingerprint(auth.oauth_tokens[0])
        assert retried.credential == fingerprint(auth.oauth_tokens[1])
        assert await rpc.close() == 0


async def test_a_canceled_login_stores_nothing(tmp_path: Path, llm: FakeLLMServer) -> None:
    async with FakeDeviceAuthServer(api_base=llm.url) as auth:
        rpc = await _engine(tmp_path, auth)
        started = await rpc.call("auth.login", {"provider_id": PROVIDER})
        assert await auth.wait_polled_async()
        rid = rpc.send("auth.cancel_login", {"login_id": started["login_id"]})
        answer = await rpc.wait_for(lambda line: line.get("id") == rid)
        assert rpc.lines[answer] == {"id": rid, "result": {}}
        finished = await _finished(rpc)
        assert finished["outcome"] == {"type": "canceled"} and finished["login_id"] == started["login_id"]
        assert rpc.names().index("auth.login_finished") < answer  # the broadcast, then the answer
        auth.approve()
        again = {"login_id": started["login_id"]}
        assert await rpc.call_error("auth.cancel_login", again) == ErrorCode.BAD_REQUEST
        assert _auth_of(await rpc.call("auth.list")) == {"provider_id": PROVIDER, "can_login": True}
        assert not (tmp_path / "data" / "logins.json").exists()
        assert "auth.changed" not in rpc.names()
        # A login still running when the engine stops ends canceled too.
        second = await rpc.call("auth.login", {"provider_id": PROVIDER})
        count = len(rpc.lines)
        assert await rpc.close() == 0
        final = await _finished(rpc, after=count)
        assert final == {"login_id": second["login_id"], "provider_id": PROVIDER, "outcome": {"type": "canceled"}}


@pytest.mark.parametrize(
    ("decide", "message"),
    [
        ("deny", "The login was denied."),
        ("expire", "The code expired before the login was approved."),
    ],
)
async def test_a_denied_or_expired_login_fails_and_keeps_the_credentials(
    tmp_path: Path, llm: FakeLLMServer, decide: str, message: str
) -> None:
    async with FakeDeviceAuthServer(api_base=llm.url) as auth:
        rpc = await _engine(tmp_path, auth)
        await rpc.call("auth.login", {"provider_id": PROVIDER})
        getattr(auth, decide)()
        assert (await _finished(rpc))["outcome"] == {"type": "failed", "message": message}
        assert not (tmp_path / "data" / "logins.json").exists()
        assert _auth_of(await rpc.call("auth.list")) == {"provider_id": PROVIDER, "can_login": True}
        assert await rpc.close() == 0


async def test_an_account_without_access_fails_after_approval(tmp_path: Path, llm: FakeLLMServer) -> None:
    async with FakeDeviceAuthServer(api_base=llm.url, no_access=True) as auth:
        rpc = await _engine(tmp_path, auth)
        await rpc.call("auth.login", {"provider_id": PROVIDER})
        auth.approve()
        outcome = (await _finished(rpc))["outcome"]
        assert outcome == {"type": "failed", "message": "The account has no access to this provider's API (HTTP 404)."}
        assert not (tmp_path / "data" / "logins.json").exists()
        assert await rpc.close() == 0
        _assert_nowhere(rpc, await rpc.stderr(), auth.oauth_tokens)


async def test_login_refusals_and_removing_a_grant(tmp_path: Path, llm: FakeLLMServer) -> None:
    """No login flow → bad_request; unknown provider → unknown_provider; a second login of the same provider while
    one runs → bad_request; an unreachable login server → runtime_failed. auth.remove forgets the grant."""
    async with FakeDeviceAuthServer(api_base=llm.url) as auth:
        rpc = await _engine(tmp_path, auth)
        assert await rpc.call_error("auth.login", {"provider_id": "anthropic"}) == ErrorCode.BAD_REQUEST
        assert await rpc.call_error("auth.login", {"provider_id": "nope"}) == ErrorCode.UNKNOWN_PROVIDER
        await rpc.call("auth.login", {"provider_id": PROVIDER})
        assert await rpc.call_error("auth.login", {"provider_id": PROVIDER}) == ErrorCode.BAD_REQUEST
        auth.approve()
        await _finished(rpc)
        start = len(rpc.lines)
        assert await rpc.call("auth.remove", {"provider_id": PROVIDER}) == {}
        changed = rpc.lines[await rpc.broadcast("auth.changed", after=start)]["params"]["provider"]
        assert changed == {"provider_id": PROVIDER, "can_login": True}
        assert PROVIDER not in json.loads((tmp_path / "data" / "logins.json").read_text())
        assert await rpc.close() == 0
    gone = FakeDeviceAuthServer()
    with gone:
        oauth = gone.oauth_entry()
    _providers(tmp_path / "data", oauth)  # nothing listens there any more
    rpc = await RpcProcess.start(tmp_path / "data")
    assert await rpc.call_error("auth.login", {"provider_id": PROVIDER}) == ErrorCode.RUNTIME_FAILED
    assert await rpc.close() == 0

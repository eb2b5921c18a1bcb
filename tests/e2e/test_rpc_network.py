"""The exec sandbox's network allowlist over a real `omniagent rpc` in auto mode (issue 22): the fake LLM plays the
model and tries listed and unlisted hosts; each test asserts what the model is told, what reached the stand-in host
(an upstream on 127.0.0.1 that `sandbox.json` pins `allowed.test` to), and what the engine logged."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from omniagent.engine.interactions.permissions import SET_MODE_METHOD as SET_PERMISSION_MODE
from omniagent.engine.sandboxes import SET_SANDBOX_METHOD
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.testing import FakeLLMServer
from tests.e2e.test_rpc_escapes import MODEL, SANDBOXED_WHY, _blocked, _start, _turn
from tests.engine.tools.upstream import running_upstream

PY = os.path.realpath(sys.executable)
CURL = "curl -sS --max-time 10"
CONNECT = "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 3)"
LOOPBACK_WHY = (
    "allowed.test resolves to 127.0.0.1, a private or loopback address, which sandboxed commands reach only when the "
    "session allows its private network"
)


async def test_the_allowlist_reaches_listed_domains_through_the_proxy_and_nothing_else(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """`network: allowlist` with sandbox.json's default list: a listed name that resolves to loopback is refused
    until the session allows its private network, then reached; an unlisted name, and the metadata address even
    though listed, are refused and the model is told why; a direct connection finds no route out. A session's
    `allowed_domains` replaces its list (a bad rule is -32602 and changes nothing). Every connection is logged."""
    async with running_upstream() as upstream:
        p = upstream.port
        data = tmp_path / "data"
        data.mkdir()
        # The metadata address is listed too: it is refused all the same.
        network = {"allowed_domains": [f"allowed.test:{p}", "169.254.169.254"], "hosts": {"allowed.test": "127.0.0.1"}}
        (data / "sandbox.json").write_text(json.dumps({"network": network}))
        w = await _start(tmp_path, llm, OMNIAGENT_LOG="info")
        try:
            result = await w.rpc.call(SET_SANDBOX_METHOD, {"session_id": w.sid, "network": "allowlist"})
            assert result.pop("limits")["processes"] > 0  # the exec limits in force: tests/e2e/test_rpc_limits.py
            assert result == {
                "session_id": w.sid,
                "mode": "sandboxed",
                "network": "allowlist",
                "ask_unsandboxed": True,
                "fetch_private": False,
                "allowed_domains": [f"allowed.test:{p}", "169.254.169.254"],
            }
            hello = f"{CURL} http://allowed.test:{p}/hello"
            told = await _turn(w, ("exec", {"command": f"{CURL} -p http://allowed.test:{p}/first"}))
            _blocked(told["call_0"], f"[network: refused allowed.test:{p} — {LOOPBACK_WHY}]")
            assert upstream.heads == []

            await w.rpc.call(SET_SANDBOX_METHOD, {"session_id": w.sid, "fetch_private": True})
            told = await _turn(
                w,
                ("exec", {"command": hello}),
                ("exec", {"command": f"{CURL} http://denied.test:{p}/"}),
                ("exec", {"command": f"{CURL} -p https://169.254.169.254/latest/meta-data/"}),
                ("exec", {"command": f'{PY} -c "{CONNECT}" {p}'}),
            )
            text, is_error = told["call_0"]
            assert not is_error and text.startswith("upstream saw:\nGET /hello HTTP/1.1\r\n"), text
            assert text.endswith("[exit code 0]") and "[network:" not in text
            text, _ = told["call_1"]
            assert "omniagent exec sandbox: denied.test is not in this session's allowed domains" in text
            assert f"[network: refused denied.test:{p} — denied.test is not in this session's allowed domains" in text
            _blocked(told["call_2"], "[network: refused 169.254.169.254:443 — 169.254.169.254 is a link-local")
            _blocked(told["call_3"], "ConnectionRefusedError")
            _blocked(told["call_3"], SANDBOXED_WHY)

            bad = {"session_id": w.sid, "allowed_domains": ["*.other.test", "*"]}
            assert await w.rpc.call_error(SET_SANDBOX_METHOD, bad) == ErrorCode.BAD_REQUEST
            maybe = {"session_id": w.sid, "network": "maybe"}
            assert await w.rpc.call_error(SET_SANDBOX_METHOD, maybe) == ErrorCode.BAD_REQUEST
            other = await w.rpc.call("session.create", {"workspace_path": str(w.ws), "model": MODEL})
            sid = str(other["session"]["id"])
            await w.rpc.call(SET_PERMISSION_MODE, {"session_id": sid, "mode": "auto"})
            changes = {"network": "allowlist", "fetch_private": True, "allowed_domains": ["*.Other.test"]}
            result = await w.rpc.call(SET_SANDBOX_METHOD, {"session_id": sid, **changes})
            assert (result["network"], result["allowed_domains"]) == ("allowlist", ["*.other.test"])
            told = await _turn(w, ("exec", {"command": hello}), sid=sid)
            assert (
                f"[network: refused allowed.test:{p} — allowed.test is not in this session's allowed domains"
                in (told["call_0"][0])
            )
        finally:
            assert await w.rpc.close() == 0
        assert upstream.request_lines == ["GET /hello HTTP/1.1"]
        log = await w.rpc.stderr()
        assert "INFO omniagent.sandbox.network.proxy: exec network " in log
        assert f"session={w.sid} allowed allowed.test:{p} address=127.0.0.1 up=" in log
        assert "WARNING omniagent.sandbox.network.proxy: exec network " in log
        for refused in (f"allowed.test:{p}", f"denied.test:{p}", "169.254.169.254:443"):
            assert f"session={w.sid} refused {refused} address=- up=0 down=0" in log, refused

"""A real `omniagent rpc` subprocess for tests: every line it writes is validated against the typed yuke models.

Each response is parsed by its method's result type (looked up through the id the test sent), each broadcast by
its data type, and the model's dump must equal the line exactly (so no `null`, no stray field, no missing tag).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omniagent.engine.broadcast import EXTENSION_BROADCASTS
from omniagent.engine.event_log import SESSION_EVENTS_METHOD, SessionEventsResult
from omniagent.engine.interactions.permissions import SET_MODE_METHOD, PermissionModeResult
from omniagent.engine.sandboxes import SET_SANDBOX_METHOD, SandboxResult
from omniagent.engine.skills.catalog import SKILLS_LIST_METHOD
from omniagent.protocols.yuke.base import YukeModel, decode
from omniagent.protocols.yuke.content import SkillsListResult
from omniagent.protocols.yuke.envelope import ErrorCode, ResponseError
from omniagent.protocols.yuke.methods import BROADCASTS, METHODS
from omniagent.testing import FakeLLMServer

WAIT = 5.0  # seconds: the bound on every wait for a line
# The engine's extension methods (docs/engine.md), which yuke's method table does not know: their result models.
EXTENSION_RESULTS: dict[str, type[YukeModel]] = {
    SET_MODE_METHOD: PermissionModeResult,
    SET_SANDBOX_METHOD: SandboxResult,
    SKILLS_LIST_METHOD: SkillsListResult,
    SESSION_EVENTS_METHOD: SessionEventsResult,
}
Line = dict[str, Any]


class Protocol(AssertionError):
    """A line broke the typed models."""


def check_line(line: Line, methods_by_id: dict[str, str]) -> None:
    """Validate one output line against the spec models; raise `Protocol` on any deviation."""
    if "jsonrpc" in line:
        raise Protocol(f"a jsonrpc member: {line}")
    if "id" in line:
        if not isinstance(line["id"], str):
            raise Protocol(f"a non-string id: {line}")
        if "error" in line:
            model = decode(ResponseError, line)
            assert set(line) == {"id", "error"} and set(line["error"]) == {"code", "message"}, line
            ErrorCode(model.error.code)
            return
        method = methods_by_id.get(line["id"])
        if method is None:
            raise Protocol(f"a response to an id never sent: {line}")
        assert set(line) == {"id", "result"}, line
        if method in EXTENSION_RESULTS:
            if decode(EXTENSION_RESULTS[method], line["result"]).dump() != line["result"]:
                raise Protocol(f"{method} result differs from its model: {line['result']}")
            return
        dumped = decode(METHODS[method].result, line["result"]).dump()
        if dumped != line["result"]:
            raise Protocol(f"{method} result differs from its model: {line['result']} != {dumped}")
        return
    name = line.get("method")
    model = BROADCASTS.get(name) or EXTENSION_BROADCASTS.get(name)
    if model is None or set(line) != {"method", "params"}:
        raise Protocol(f"not a broadcast: {line}")
    data = decode(model, line["params"])
    if data.dump() != line["params"]:
        raise Protocol(f"{name} differs from its model: {line['params']} != {data.dump()}")


class RpcProcess:
    """One engine subprocess. Start with `await RpcProcess.start(data_dir)`; always `await close()`."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[Line] = []
        self.methods_by_id: dict[str, str] = {}
        self._changed = asyncio.Condition()
        self._counter = 0
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, data_dir: Path, env: dict[str, str] | None = None) -> RpcProcess:
        # A home of the test's own (never created), so the tester's personal skills stay out of the engine's prompts.
        home = {"HOME": str(data_dir.parent / "home"), "CLAUDE_CONFIG_DIR": ""}
        keys = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
        inherited = {name: value for name, value in os.environ.items() if name not in keys}
        full_env = {**inherited, "OMNIAGENT_RETRY_SCALE": "1.0", **home, **(env or {})}
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "omniagent",
            "rpc",
            "--data-dir",
            str(data_dir),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=full_env,
            limit=16 * 1024 * 1024,
        )
        return cls(proc)

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            value = json.loads(line)
            check_line(value, self.methods_by_id)
            async with self._changed:
                self.lines.append(value)
                self._changed.notify_all()
        async with self._changed:
            self._changed.notify_all()

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)

    def send(self, method: str, params: dict[str, Any] | None = None, *, request_id: str | None = None) -> str:
        """Send a request; returns its id."""
        self._counter += 1
        rid = request_id or f"req-{self._counter}"
        self.methods_by_id[rid] = method
        message: dict[str, Any] = {"id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self.send_raw(json.dumps(message).encode() + b"\n")
        return rid

    async def wait_for(self, predicate: Callable[[Line], bool], *, after: int = 0, within: float = WAIT) -> int:
        """Index of the first line from `after` on that matches; fails after `within` seconds."""

        def find() -> int | None:
            return next((i for i in range(after, len(self.lines)) if predicate(self.lines[i])), None)

        async def waiter() -> int:
            async with self._changed:
                while (index := find()) is None:
                    if self._reader.done():
                        self._reader.result()
                        raise AssertionError("the engine closed its output")
                    await self._changed.wait()
                return index

        try:
            return await asyncio.wait_for(waiter(), within)
        except TimeoutError:
            raise AssertionError(f"no matching line within {within}s; last lines: {self.lines[-5:]}") from None

    async def response(self, rid: str, within: float = WAIT) -> Line:
        return self.lines[await self.wait_for(lambda line: line.get("id") == rid, within=within)]

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request and return its result (failing on an error response)."""
        line = await self.response(self.send(method, params))
        assert "result" in line, line
        return line["result"]

    async def call_error(self, method: str, params: dict[str, Any] | None = None) -> int:
        """Send a request that must fail; returns its error code."""
        line = await self.response(self.send(method, params))
        assert "error" in line, line
        return int(line["error"]["code"])

    async def broadcast(
        self,
        name: str,
        *,
        after: int = 0,
        within: float = WAIT,
        where: Callable[[dict[str, Any]], bool] = lambda _p: True,
    ) -> int:
        return await self.wait_for(
            lambda line: line.get("method") == name and where(line["params"]), after=after, within=within
        )

    def names(self, start: int = 0, end: int | None = None) -> list[str]:
        """Broadcast names (and `response:<method>` for responses) in order."""
        out = []
        for line in self.lines[start:end]:
            if "method" in line:
                out.append(line["method"])
            else:
                out.append(f"response:{self.methods_by_id.get(line['id'], '?')}")
        return out

    async def close(self) -> int:
        """Close stdin and wait for a clean exit; returns the exit code."""
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        try:
            code = await asyncio.wait_for(self.proc.wait(), WAIT)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
            raise AssertionError("the engine did not exit after stdin closed") from None
        await self._reader
        return code

    async def kill(self) -> None:
        """SIGKILL: no cleanup, no flush."""
        self.proc.kill()
        await self.proc.wait()
        self._reader.cancel()

    async def stderr(self) -> str:
        assert self.proc.stderr is not None
        return (await self.proc.stderr.read()).decode(errors="replace")


def write_providers(config_dir: Path, llm: FakeLLMServer, *, key: str = "test-key-123") -> None:
    """providers.json (mode 0600) with one fake provider per protocol, all pointing at the fake LLM server."""
    cost = [{"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}]
    entries = [
        {
            "id": pid,
            "name": pid,
            "base_url": llm.openai_base_url,
            "endpoints": [{"protocol": protocol, "key_header": header}],
            "api_key": key,
            "models": [
                {
                    "id": "fake-model",
                    "cost": cost,
                    "reasoning_levels": [None, "low", "high"],
                    "limits": {"context_window": 100000, "max_output_tokens": 4096},
                }
            ],
        }
        for pid, protocol, header in (
            ("fake-anthropic", "anthropic_messages", "x_api_key"),
            ("fake-chat", "openai_chat", "authorization_bearer"),
            ("fake-responses", "openai_responses", "authorization_bearer"),
        )
    ]
    path = config_dir / "providers.json"
    config_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"providers": entries}))
    path.chmod(0o600)

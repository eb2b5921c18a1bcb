"""One `opencode serve` per session: launched on 127.0.0.1 with a fresh password, spoken to over HTTP Basic.

`launch_server` starts the CLI through `wire/process.py` on a free port, in the session's directory, with
`OPENCODE_SERVER_USERNAME` / `OPENCODE_SERVER_PASSWORD` (a new secret per session) and `OPENCODE_CONFIG_CONTENT` =
the host's value with the session's permission rules merged in; it polls `/global/health` until the server answers.
`OpencodeServer` wraps the JSON routes and the SSE `/event` stream. The password only ever travels in the child's
environment and the `Authorization` header: no error text, log line or event carries it.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from typing import Any

import httpx

from omniagent.engine.providers.clients.sse import iter_sse
from omniagent.errors import OmniagentError
from omniagent.protocols.sidecar.commands import PermissionMode
from omniagent.wire.errors import WireError
from omniagent.wire.process import ChildProcess, open_process

SERVER_USER = "opencode"
CONFIG_VAR = "OPENCODE_CONFIG_CONTENT"
# Seconds between health polls while the server starts.
HEALTH_POLL = 0.1
# Seconds one HTTP call may take; the long ones (a synchronous summary) are bounded by the caller instead.
REQUEST_TIMEOUT = 30.0
# Starts tried before a server that exits while starting is an error (a free port can be taken before opencode
# binds it).
STARTS = 2
# opencode serve never reads stdin and saves its sessions as it goes: closing sends SIGTERM at once instead of
# waiting for an EOF it would ignore.
CLOSE_GRACE = 0.0
# Characters of an error body kept in an error message.
ERROR_BODY_CHARS = 300
# The rules each permission mode puts in front of the host's own (later, more specific rules win in opencode).
# The `question` tool must stay allowed: asking is its whole job.
_ASK_RULES: dict[str, Any] = {"*": "ask", "question": "allow"}
_ALLOW_RULES: dict[str, Any] = {"*": "allow"}


class ConfigProblem(OmniagentError, ValueError):
    """The host's `OPENCODE_CONFIG_CONTENT` is not a JSON object."""


class ServerError(WireError):
    """An HTTP call failed: a status other than 2xx (`status`), or no answer at all (`status` None)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def config_content(host_value: str | None, mode: PermissionMode) -> str:
    """`OPENCODE_CONFIG_CONTENT` for the child: the host's config with the mode's permission rules merged in.

    Ask keeps the host's own rules after `{"*":"ask","question":"allow"}`, so a rule the user wrote still wins;
    AutoApprove replaces them with `{"*":"allow"}` (the session said never ask). Raises `ConfigProblem`.
    """
    config: dict[str, Any] = {}
    if host_value and host_value.strip():
        try:
            parsed = json.loads(host_value)
        except json.JSONDecodeError as exc:
            raise ConfigProblem(f"{CONFIG_VAR} is not valid JSON ({exc.msg})") from exc
        if not isinstance(parsed, dict):
            raise ConfigProblem(f"{CONFIG_VAR} is not a JSON object")
        config = parsed
    if mode is PermissionMode.AUTO_APPROVE:
        config["permission"] = dict(_ALLOW_RULES)
        return json.dumps(config)
    own = config.get("permission")
    rules = dict(_ASK_RULES)
    if isinstance(own, str):
        rules["*"] = own  # a bare action applies to every tool
    elif isinstance(own, Mapping):
        rules.update(own)
    config["permission"] = rules
    return json.dumps(config)


def free_port() -> int:
    """A port on 127.0.0.1 nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServerExited(WireError):
    """The server process ended (`status` as `ExitStatus` prints it, `stderr` its last lines)."""

    def __init__(self, status: str, stderr: list[str]) -> None:
        super().__init__(status)
        self.status = status
        self.stderr = stderr


class OpencodeServer:
    """The HTTP face of one running `opencode serve`."""

    def __init__(self, client: httpx.AsyncClient, child: ChildProcess, version: str | None) -> None:
        self.client = client
        self.child = child
        self.version = version

    async def get(self, path: str) -> Any:
        """GET a JSON route. Raises `ServerError`."""
        return await self._call("GET", path, None)

    async def post(
        self, path: str, body: Mapping[str, Any] | None = None, *, seconds: float | None = REQUEST_TIMEOUT
    ) -> Any:
        """POST a JSON route (waiting at most `seconds`, None: no limit); None for an empty answer (204).
        Raises `ServerError`."""
        return await self._call("POST", path, body, seconds=seconds)

    async def _call(
        self, method: str, path: str, body: Mapping[str, Any] | None, *, seconds: float | None = REQUEST_TIMEOUT
    ) -> Any:
        try:
            response = await self.client.request(method, path, json=body, timeout=seconds)
        except httpx.HTTPError as exc:
            raise ServerError(f"{method} {path}: {type(exc).__name__}") from exc
        if response.status_code >= 300:
            raise ServerError(f"{method} {path}: {response.status_code} {_error_text(response)}", response.status_code)
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError as exc:
            raise ServerError(f"{method} {path}: the answer is not JSON") from exc

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        """The server's event stream (`GET /event`), one decoded JSON object per SSE event; ends with the stream.
        Raises `ServerError` when it cannot be opened."""
        try:
            async with self.client.stream("GET", "/event", timeout=httpx.Timeout(None, connect=5.0)) as response:
                if response.status_code != 200:
                    raise ServerError(f"GET /event: {response.status_code}", response.status_code)
                async for event in iter_sse(response.aiter_lines()):
                    with suppress(ValueError):
                        decoded = json.loads(event.data)
                        if isinstance(decoded, dict):
                            yield decoded
        except httpx.HTTPError as exc:
            raise ServerError(f"GET /event: {type(exc).__name__}") from exc


def _error_text(response: httpx.Response) -> str:
    """opencode's error bodies are `{"name":…,"data":{"message":…}}`; fall back to the raw text, cut short."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:ERROR_BODY_CHARS]
    if isinstance(body, Mapping):
        data = body.get("data")
        if isinstance(data, Mapping) and isinstance(data.get("message"), str):
            return str(data["message"])[:ERROR_BODY_CHARS]
        if isinstance(body.get("message"), str):
            return str(body["message"])[:ERROR_BODY_CHARS]
    return json.dumps(body)[:ERROR_BODY_CHARS]


@asynccontextmanager
async def launch_server(
    executable: str, directory: str, mode: PermissionMode, *, startup_timeout: float, prefix: Sequence[str] = ()
) -> AsyncIterator[OpencodeServer]:
    """Start `opencode serve` for one session (under `prefix`, `open_process`'s) and yield it once
    `/global/health` answers; stop it on exit.

    Raises: `ConfigProblem`, `SpawnError` (from `open_process`), `ServerExited` (it died while starting),
    `TimeoutError` (no healthy answer within `startup_timeout`).
    """
    password = secrets.token_urlsafe(32)
    env = dict(os.environ)
    env[CONFIG_VAR] = config_content(env.get(CONFIG_VAR), mode)
    env["OPENCODE_SERVER_USERNAME"] = SERVER_USER
    env["OPENCODE_SERVER_PASSWORD"] = password
    auth = httpx.BasicAuth(SERVER_USER, password)
    async with asyncio.timeout(startup_timeout):
        for attempt in range(STARTS):
            stack = AsyncExitStack()
            try:
                argv = [executable, "serve", "--hostname", "127.0.0.1"]
                server = await _start(stack, argv, directory, env, auth, prefix)
            except ServerExited:
                await stack.aclose()
                if attempt + 1 == STARTS:
                    raise
                continue  # most likely the free port was taken meanwhile: once more, on another
            except BaseException:
                await stack.aclose()
                raise
            break
    async with stack:
        yield server


async def _start(
    stack: AsyncExitStack,
    argv: list[str],
    directory: str,
    env: dict[str, str],
    auth: httpx.BasicAuth,
    prefix: Sequence[str],
) -> OpencodeServer:
    """One start on a free port, its resources on `stack`; the server once it answers its health check."""
    port = free_port()
    child = await stack.enter_async_context(
        open_process([*argv, "--port", str(port)], cwd=directory, env=env, close_grace=CLOSE_GRACE, prefix=prefix)
    )
    client = await stack.enter_async_context(
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", auth=auth, trust_env=False)
    )
    # Nothing reads its stdout but us: drain it so a chatty server never blocks on a full pipe. A plain task, not
    # a TaskGroup: a group would wrap every error of the caller's block in an ExceptionGroup.
    drain = asyncio.create_task(_drain(child.stdout))
    stack.push_async_callback(stop_task, drain)
    version = await _wait_healthy(client, child)
    return OpencodeServer(client, child, version)


async def stop_task(task: asyncio.Task[None]) -> None:
    """Cancel a helper task and wait for it to end."""
    task.cancel()
    await asyncio.wait({task})  # unlike awaiting it, never swallows a cancel of our own task


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.read(65536):
        pass


async def _wait_healthy(client: httpx.AsyncClient, child: ChildProcess) -> str | None:
    """Poll `/global/health` every HEALTH_POLL s until it answers 200; its `version`. Raises `ServerExited`."""
    while True:
        if child.returncode is not None:
            status = await child.wait()
            raise ServerExited(str(status), child.stderr_tail())
        with suppress(httpx.HTTPError, ValueError):
            response = await client.get("/global/health", timeout=2.0)
            if response.status_code == 200:
                version = response.json().get("version")
                return version if isinstance(version, str) else None
        await asyncio.sleep(HEALTH_POLL)

"""Test support for `omniagent acp`: the agent command (behind a logging tap), a fake-LLM data dir, and the schema
check of every message the agent wrote.

Every test that runs the agent ends with `check_transcript(log)`: each agent → client line must be JSON-RPC 2.0
and validate against the ACP JSON schema of the version the connection negotiated — responses against the result
type of the request they answer, errors against `Error`, notifications and requests against their params type. A v2
connection validates against both v2 schemas we keep: the current draft and 2.0.0-alpha.2 (a v2 client may have been
built on either, and both say version 2).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from omniagent.testing import FakeLLMServer
from tests.e2e.agents import packages
from tests.engine.rpc_harness import write_providers

SCHEMA_DIR = Path(__file__).resolve().parents[3] / "src" / "omniagent" / "protocols" / "acp" / "schema"
TAP = Path(__file__).resolve().parent / "acp_tap.py"
MODEL = "fake-anthropic/fake-model"


def npm_peer(name: str) -> tuple[str, Path]:
    """`node` and the entry file of the pinned npm package `name` (a key of tests/e2e/agents/versions.json),
    installed once by the shared installer (`scripts/install_agents.py`) into a cache dir outside the repo."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is needed to run the npm ACP peers")
    return node, packages.entry(name)


async def run_peer(
    argv: list[str], *, within: float, cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[str, str, int]:
    """Run an outside ACP peer (a node client driving `omniagent acp`) to its end: its stdout, stderr and exit code.
    Killed if it has not ended `within` seconds. `env`: the peer's (and so the agent's) environment, else
    `agent_env()`."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env if env is not None else agent_env(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), within)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return out.decode(), err.decode(), proc.returncode


def agent_argv(data_dir: Path, log: Path) -> list[str]:
    """`omniagent acp --data-dir D`, behind the tap that logs every line to `log`."""
    return [
        sys.executable,
        str(TAP),
        str(log),
        "--",
        sys.executable,
        "-m",
        "omniagent",
        "acp",
        "--data-dir",
        str(data_dir),
    ]


def hub_agent_argv(agent: str, log: Path) -> list[str]:
    """`omniagent acp --agent AGENT` (any agent through the hub), behind the tap that logs every line to `log`; its
    data dir (the hub's session index) is `hub-data` beside the log."""
    face = ["-m", "omniagent", "acp", "--agent", agent, "--data-dir", str(log.parent / "hub-data")]
    return [sys.executable, str(TAP), str(log), "--", sys.executable, *face]


def agent_env() -> dict[str, str]:
    """The test environment: no real provider keys; documented retry waits; an empty home (never created), so the
    tester's personal skills are not the agent's commands."""
    keys = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
    env = {k: v for k, v in os.environ.items() if k not in keys}
    env["OMNIAGENT_RETRY_SCALE"] = "1.0"
    env |= {"HOME": str(Path(tempfile.gettempdir()) / "omniagent-tests-no-home"), "CLAUDE_CONFIG_DIR": ""}
    return env


def prepare(tmp_path: Path, llm: FakeLLMServer) -> tuple[Path, Path, Path]:
    """A data dir whose providers point at the fake LLM (default model `fake-anthropic/fake-model`), a workspace,
    and the tap's log path."""
    data, workspace = tmp_path / "data", tmp_path / "ws"
    write_providers(data, llm)
    workspace.mkdir(exist_ok=True)
    return data, workspace, tmp_path / "acp.log"


def read_log(log: Path) -> list[tuple[str, dict[str, Any]]]:
    """The tap's log as (direction, message) pairs; a batch line contributes each of its entries."""
    out: list[tuple[str, dict[str, Any]]] = []
    for raw in log.read_text(encoding="utf-8").splitlines():
        entry = json.loads(raw)
        message = json.loads(entry["line"])
        for item in message if isinstance(message, list) else [message]:
            out.append((entry["dir"], item))
    return out


def agent_messages(log: Path) -> list[dict[str, Any]]:
    return [m for d, m in read_log(log) if d == "out"]


# The schemas a connection of each version must satisfy (files in SCHEMA_DIR, without `.schema.json`).
SCHEMAS = {1: ("acp-v1",), 2: ("acp-v2", "acp-v2-alpha.2")}


@cache
def _schema(name: str) -> dict[str, Any]:
    return dict(json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text()))


@cache
def _validator(name: str, definition: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": _schema(name)["$defs"]})


@cache
def _root(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(_schema(name))


def _definition(name: str, method: str, side: str, suffix: tuple[str, ...]) -> str:
    for definition, body in _schema(name)["$defs"].items():
        # `$/cancel_request` belongs to both sides: its x-side is "protocol".
        if body.get("x-method") == method and body.get("x-side") in (side, "protocol") and definition.endswith(suffix):
            return str(definition)
    raise AssertionError(f"no {name} definition for {method} ({side})")


def _check(name: str, definition: str, value: Any, where: str) -> None:
    errors = sorted(_validator(name, definition).iter_errors(value), key=lambda e: list(e.path))
    if errors:
        raise AssertionError(f"{name} {definition} invalid in {where}: {errors[0].message} at {list(errors[0].path)}")


def check_message(version: int, message: dict[str, Any], requests: dict[Any, str], *, side: str = "client") -> None:
    """Validate one message against every schema of `version`: a request or notification against its params type
    (`side`: who receives it), a response against the result type of the request it answers (`requests`: id →
    method of the requests it may answer), an error against `Error`."""
    assert message.get("jsonrpc") == "2.0", message
    answering = "agent" if side == "client" else "client"
    where = json.dumps(message)[:300]
    for name in SCHEMAS[version]:
        root_errors = list(_root(name).iter_errors(message))
        assert not root_errors, f"{name} envelope invalid: {root_errors[0].message} in {where}"
        if "method" in message:
            if message["method"].startswith("_"):
                continue  # an extension method: its params are its own
            suffix = ("Request",) if "id" in message else ("Notification",)
            _check(name, _definition(name, message["method"], side, suffix), message.get("params"), where)
        elif "error" in message:
            _check(name, "Error", message["error"], where)
        else:
            method = requests.get(message.get("id"))
            assert method is not None, f"a response to an id never sent: {where}"
            if not method.startswith("_"):
                _check(name, _definition(name, method, answering, ("Response",)), message["result"], where)


def negotiated(entries: list[tuple[str, dict[str, Any]]]) -> int:
    """The protocol version the agent's initialize answer chose."""
    version = next(
        (
            m["result"]["protocolVersion"]
            for d, m in entries
            if d == "out" and isinstance(m.get("result"), dict) and "protocolVersion" in m["result"]
        ),
        None,
    )
    assert version in (1, 2), "no initialize answer"
    return int(version)


def check_transcript(log: Path) -> int:
    """Validate every agent → client message of a logged connection; returns how many were checked."""
    entries = read_log(log)
    version = negotiated(entries)
    requests = {m["id"]: m["method"] for d, m in entries if d == "in" and "method" in m and "id" in m}
    checked = 0
    for direction, message in entries:
        if direction == "out":
            check_message(version, message, requests)
            checked += 1
    return checked


def updates(log: Path, session_id: str | None = None) -> list[dict[str, Any]]:
    """The `session/update` payloads the agent sent, in order."""
    return [
        m["params"]["update"]
        for m in agent_messages(log)
        if m.get("method") == "session/update" and (session_id is None or m["params"]["sessionId"] == session_id)
    ]

"""Helpers for the engine adapter tests: the environment that points our engine at the fake LLM, the scenarios, and
bounded, schema-checked event collection on a real `Runtime`.

The engine reads its data dir and keys from the process environment (as `omniagent rpc` does), so in-process tests
set them with `monkeypatch` and subprocess tests pass them as the child's environment. Only the built-in Anthropic
provider gets a key, pointed at the fake LLM by `ANTHROPIC_BASE_URL`: the issue's acceptance setup.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.sidecar.events import Event
from omniagent.runtime.runtime import Runtime
from omniagent.runtime.session import Session
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests import event_stream
from tests.event_stream import is_kind as is_kind  # re-exported for the tests
from tests.event_stream import is_turn_end
from tests.event_stream import of as of  # re-exported for the tests
from tests.sidecar_schema import validate

KEY = "sk-ant-fake-key-for-tests-0123456789"
# Every variable that could hand the engine a key or another home; cleared before the test's own are set.
ENGINE_VARS = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
    "GOOGLE_GEMINI_BASE_URL",
    "OLLAMA_HOST",
)
WAIT = 15.0  # seconds: the bound on every wait


def engine_env(tmp_path: Path, llm: FakeLLMServer | None) -> dict[str, str]:
    """Our engine's variables: its own data dir, and (given a fake LLM) the Anthropic key and base URL."""
    env = {"OMNIAGENT_DATA_DIR": str(tmp_path / "data"), "OMNIAGENT_RETRY_SCALE": "0.01"}
    if llm is not None:
        env |= {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": llm.url}
    return env


def use_engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, llm: FakeLLMServer | None) -> None:
    """Point this process's engine at `llm` (no key at all when None), with a data dir of the test's own."""
    for var in ENGINE_VARS:
        monkeypatch.delenv(var, raising=False)
    for name, value in engine_env(tmp_path, llm).items():
        monkeypatch.setenv(name, value)
    # A home of the test's own (never created): the tester's personal skills stay out of the engine sessions.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)


def child_env(tmp_path: Path, llm: FakeLLMServer | None) -> dict[str, str]:
    """A whole environment for an `omniagent` subprocess: a fresh HOME, no agent CLI on PATH, the engine's own."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    base = {
        k: v for k, v in os.environ.items() if k not in ENGINE_VARS and not k.startswith(("OMNIAGENT_", "ANYAGENT_"))
    }
    base |= {"HOME": str(home), "PATH": "/usr/bin:/bin", "OMNIAGENT_NO_LOGIN_SHELL": "1"}
    return base | engine_env(tmp_path, llm)


def tool_then_text(tool: str = "write", arguments: dict[str, Any] | None = None, text: str = "All done.") -> Scenario:
    """One tool call (default: write hello.txt), then a text answer."""
    arguments = arguments if arguments is not None else {"path": "hello.txt", "content": "hello\n"}
    return Scenario([Reply(tool_calls=(FakeToolCall(tool, arguments),)), Reply(text=text)])


async def bodies(llm: FakeLLMServer, count: int) -> list[dict[str, Any]]:
    """The JSON bodies of the first `count` model requests (bounded wait)."""
    requests = await llm.wait_for_requests_async(count)
    out = [request.body for request in requests[:count]]
    assert all(isinstance(body, dict) for body in out)
    return [body for body in out if isinstance(body, dict)]


def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir(exist_ok=True)
    return path


@asynccontextmanager
async def runtime() -> AsyncIterator[Runtime]:
    async with asyncio.timeout(WAIT * 3), Runtime() as opened:
        yield opened


async def open_engine(rt: Runtime, directory: Path, **options: Any) -> Session:
    session = await rt.open("omniagent", directory, **options)
    validate("SessionInfo", session.info().dump())
    return session


async def collect(session: Session, until: Callable[[Event], bool]) -> list[Event]:
    """Events up to and including the first that matches `until` (bounded by WAIT). Each is schema-checked."""
    return await event_stream.collect(session, until, within=WAIT)


async def one_turn(session: Session) -> list[Event]:
    return await collect(session, is_turn_end)

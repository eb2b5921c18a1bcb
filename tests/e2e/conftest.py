"""Fixtures the end-to-end tests share: a fake LLM on loopback with an empty scenario (tests add replies), and an
`omniagent rpc` subprocess whose providers point at it. A module that needs another scenario or process defines its
own fixture of the same name."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from omniagent.testing import FakeLLMServer, Scenario
from tests.e2e.rpc_sessions import start_rpc
from tests.engine.rpc_harness import RpcProcess


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLMServer]:
    async with FakeLLMServer(Scenario()) as server:
        yield server


@pytest.fixture
async def rpc(tmp_path: Path, llm: FakeLLMServer) -> AsyncIterator[RpcProcess]:
    """`omniagent rpc` on `tmp_path/data` (`rpc_sessions.start_rpc`), closed after the test."""
    proc = await start_rpc(tmp_path, llm)
    try:
        yield proc
    finally:
        await proc.close()

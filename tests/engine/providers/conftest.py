"""Fixtures for provider tests: a fake LLM server on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from omniagent.testing import FakeLLMServer


@pytest.fixture
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server

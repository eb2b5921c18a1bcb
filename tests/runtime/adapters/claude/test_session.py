"""The Claude Code adapter's failures at open, with stand-in executables (no real CLI needed): an executable that
exits at once, and an option the CLI does not take. The real CLI's paths are tests/e2e/agents/test_claude_native.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from omniagent.runtime.errors import InvalidConfiguration, ProtocolFailed
from omniagent.runtime.runtime import Runtime


def _env(tmp_path: Path, script: str) -> dict[str, str]:
    claude = tmp_path / "claude"
    claude.write_text(script, encoding="utf-8")
    claude.chmod(0o755)
    return {**os.environ, "HOME": str(tmp_path), "OMNIAGENT_CLAUDE_BIN": str(claude), "OMNIAGENT_NO_LOGIN_SHELL": "1"}


async def test_a_cli_that_exits_during_the_handshake_fails_the_open_with_its_stderr(tmp_path: Path) -> None:
    env = _env(tmp_path, "#!/bin/sh\necho 'not an agent' >&2\nexit 3\n")
    async with Runtime(env=env) as runtime:
        with pytest.raises(ProtocolFailed) as caught:
            await runtime.open("claude", tmp_path)
    assert "exit status: 3" in caught.value.detail and "not an agent" in caught.value.detail


async def test_an_option_the_cli_does_not_take_fails_before_it_starts(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    env = _env(tmp_path, f"#!/bin/sh\ntouch {marker}\nexit 3\n")
    async with Runtime(env=env) as runtime:
        with pytest.raises(InvalidConfiguration, match="unknown option `colour`"):
            await runtime.open("claude", tmp_path, configure={"colour": "blue"})
        with pytest.raises(InvalidConfiguration, match="`reckless` is not a choice of `mode`"):
            await runtime.open("claude", tmp_path, configure={"mode": "reckless"})
    assert not marker.exists()

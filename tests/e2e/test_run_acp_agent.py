"""`omniagent run` with an agent CLI found on PATH and no provider key: a fake `qwen` (the ACP fake agent of
tests/fixtures/acp_agents behind a launcher) in a directory of the test's own. The line that says which agent was
picked and why. Real subprocesses; every wait bounded."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from tests.runtime.adapters.engine.harness import child_env, workspace

AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "acp_agents" / "fake_agent.py"
WAIT = 30.0  # seconds: the bound on one `omniagent run`


def _qwen(tmp_path: Path) -> Path:
    """A `qwen` launcher (Qwen Code speaks ACP) running the fake agent, in a bin directory of its own."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "qwen"
    fake = f"{shlex.quote(sys.executable)} {shlex.quote(str(AGENT))} --max-version 1"
    launcher.write_text(f"#!/bin/sh\nexec {fake}\n")  # its `--acp` is dropped: the fake speaks nothing else
    launcher.chmod(0o755)
    return launcher


def _run(tmp_path: Path, launcher: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = child_env(tmp_path, None) | {"PATH": f"{launcher.parent}:/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "omniagent", "run", *args],
        cwd=workspace(tmp_path),
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )


def test_run_says_which_agent_cli_it_picked_where_it_was_found_and_why(tmp_path: Path) -> None:
    """Issue 26: no engine key, one agent CLI on PATH: `run` names the agent, where it found it, and why not the
    engine, on stderr, then the turn runs through it."""
    launcher = _qwen(tmp_path)
    out = _run(tmp_path, launcher, "hello")
    assert out.returncode == 0, out.stderr
    assert "Hello" in out.stdout
    why = f"the first agent CLI found: {launcher}; our engine has no model provider key"
    assert out.stderr.splitlines()[0] == f"omniagent: using Qwen Code ({why})", out.stderr

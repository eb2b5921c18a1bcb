"""`omniagent run` with an agent CLI found on PATH and no provider key: a fake `qwen` (the ACP fake agent of
tests/fixtures/acp_agents behind a launcher) in a directory of the test's own. The line that says which agent was
picked and why, and an agent that dies mid-turn, reported with its exit status and the tail of its stderr (bounded,
without the secrets of its environment). Real subprocesses; every wait bounded."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from omniagent.faces.cli.run import EXIT_TURN_FAILED
from tests.runtime.adapters.engine.harness import child_env, workspace

AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "acp_agents" / "fake_agent.py"
WAIT = 30.0  # seconds: the bound on one `omniagent run`
# In the agent's environment under a name that says "secret"; the fake agent prints it to stderr as it dies.
AGENT_KEY = "fake-agent-key-0123456789abcdef"


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
    env = child_env(tmp_path, None) | {"PATH": f"{launcher.parent}:/usr/bin:/bin", "FAKE_AGENT_KEY": AGENT_KEY}
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


def test_an_agent_dying_mid_turn_is_reported_with_its_exit_status_and_the_tail_of_its_stderr(tmp_path: Path) -> None:
    """Issue 26: the agent writes to stderr and exits 3 mid-turn; the failure `run` prints, and the TurnEnded event
    of `--json`, carry "exit status: 3" and its last stderr lines: at most 2,000 characters of them, and not the
    value of a secret variable of its environment it printed."""
    launcher = _qwen(tmp_path)
    out = _run(tmp_path, launcher, "crash")
    assert out.returncode == EXIT_TURN_FAILED, out.stderr
    assert "bye" in out.stdout
    failure = out.stderr[out.stderr.index("omniagent: the turn failed: ") :]
    assert failure.startswith("omniagent: the turn failed: agent exited during the turn (exit status: 3): "), failure
    assert failure.rstrip().endswith("key [redacted]\nfake agent: out of memory, giving up"), failure
    assert failure.count("out of memory") == 1  # said once, not again as the session's error
    assert AGENT_KEY not in out.stderr and "x" * 2000 not in failure and len(failure) < 2200

    out = _run(tmp_path, launcher, "--json", "crash")
    assert out.returncode == EXIT_TURN_FAILED, out.stderr
    last = json.loads(out.stdout.splitlines()[-1])
    message = last["kind"]["TurnEnded"]["stop"]["Failed"]["message"]
    assert message.startswith("agent exited during the turn (exit status: 3): "), message
    assert message.endswith("fake agent: out of memory, giving up") and len(message) < 2100, message
    assert AGENT_KEY not in out.stdout + out.stderr

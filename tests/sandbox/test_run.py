"""The sandbox's API on its own, without the engine: `run_command` runs a command under a policy and says how it
ended (the engine's `exec` tool and the batch's task environment are both built on it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from omniagent.sandbox import ExecLimits, SandboxPolicy, SandboxUnavailable, run_command

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

SANDBOXED = SandboxPolicy(mode="sandboxed")


async def test_a_command_runs_in_the_sandbox_and_its_output_is_handed_over_as_read(tmp_path: Path) -> None:
    chunks: list[bytes] = []
    outcome = await run_command("echo $PPID; pwd", tmp_path, SANDBOXED, seconds=20, on_output=chunks.append)
    assert (outcome.returncode, outcome.timed_out, outcome.sandbox_failed, outcome.limit) == (0, False, False, None)
    assert outcome.output == f"1\n{tmp_path}\n"  # the sandbox's own PID namespace: the shell's parent is its init
    assert b"".join(chunks).decode() == outcome.output


async def test_the_outcome_keeps_the_head_and_the_tail_of_long_output(tmp_path: Path) -> None:
    chunks: list[bytes] = []
    command = "printf 'a%.0s' $(seq 5000); printf 'b%.0s' $(seq 5000)"
    outcome = await run_command(command, tmp_path, SANDBOXED, seconds=20, on_output=chunks.append, kept_bytes=100)
    assert outcome.output == f"{'a' * 50}\n[... 9900 bytes of output omitted ...]\n{'b' * 50}"
    assert len(b"".join(chunks)) == 10_000


async def test_more_output_than_the_limit_stops_the_command_with_its_sentence(tmp_path: Path) -> None:
    policy = SandboxPolicy(mode="sandboxed", limits=ExecLimits(output_bytes=4096))
    outcome = await run_command("yes", tmp_path, policy, seconds=20)
    assert outcome.limit is not None
    assert outcome.limit.startswith("[stopped: the command wrote more than 4 KiB of output (the limit `output_mb`")


async def test_a_command_past_its_timeout_is_killed(tmp_path: Path) -> None:
    outcome = await run_command("sleep 30", tmp_path, SANDBOXED, seconds=0.3, kill_grace=0.2, drain_grace=0.2)
    assert (outcome.returncode, outcome.timed_out) == (None, True)


async def test_limits_refused_before_mean_nothing_runs(tmp_path: Path) -> None:
    policy = SandboxPolicy(mode="sandboxed", limits=ExecLimits(refused="sandbox.json is not valid JSON"))
    with pytest.raises(SandboxUnavailable, match=r"sandbox\.json is not valid JSON"):
        await run_command("touch ran", tmp_path, policy, seconds=20)
    assert not (tmp_path / "ran").exists()

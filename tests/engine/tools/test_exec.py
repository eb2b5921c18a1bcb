"""The exec tool against real /bin/sh subprocesses: exit codes, timeouts, caps, live output, cancellation."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from omniagent.engine.tools import TextView, default_tools

from .conftest import WAIT_LIMIT, make_ctx, wait_dead


async def test_exec_returns_combined_output_and_exit_code_zero(workspace: Path) -> None:
    """Our choice (exec.py docstring): stdout and stderr share one stream; the status line ends the output."""
    result = await default_tools().run("exec", {"command": "echo out; echo err >&2"}, make_ctx(workspace))
    assert not result.is_error
    assert result.output == "out\nerr\n[exit code 0]"
    assert result.views == (TextView(text="$ echo out; echo err >&2\nout\nerr\n[exit code 0]", language="console"),)


async def test_exec_with_non_zero_exit_is_an_error_carrying_the_output(workspace: Path) -> None:
    """Our choice: a failing command is an error state, and the model still sees what it printed."""
    result = await default_tools().run("exec", {"command": "echo failing; exit 3"}, make_ctx(workspace))
    assert result.is_error
    assert result.output == "failing\n[exit code 3]"


async def test_exec_runs_in_the_workspace_root_with_empty_stdin(workspace: Path) -> None:
    """Task brief: commands run in the workspace; stdin is /dev/null so `cat` ends at once."""
    result = await default_tools().run("exec", {"command": "pwd; cat; echo done"}, make_ctx(workspace))
    assert result.output == f"{workspace}\ndone\n[exit code 0]"


async def test_exec_hides_provider_api_keys_from_the_command(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Brief standard: secrets never reach a wire; a command's output goes to the model and the yuke wire."""
    monkeypatch.setenv("SOMEPROVIDER_API_KEY", "sk-should-not-leak")
    result = await default_tools().run(
        "exec", {"command": 'echo "${SOMEPROVIDER_API_KEY:-unset}"'}, make_ctx(workspace)
    )
    assert result.output == "unset\n[exit code 0]"


async def test_exec_timeout_kills_the_command_and_its_children(workspace: Path) -> None:
    """Task brief: on timeout the whole process group is killed, within a bounded time."""
    command = "sleep 30 & echo $! > child.pid; wait"
    result = await default_tools().run("exec", {"command": command, "timeout": 0.3}, make_ctx(workspace))
    assert result.is_error
    assert "timed out after 0.3 s" in result.output
    assert await wait_dead(int((workspace / "child.pid").read_text()))


async def test_exec_timeout_kills_children_that_ignore_sigterm(workspace: Path) -> None:
    """Our choice: SIGTERM, then SIGKILL after the kill grace, so ignoring SIGTERM does not keep a command alive."""
    command = "trap '' TERM; sleep 30 & echo $! > child.pid; wait; wait"
    ctx = make_ctx(workspace, kill_grace=0.2)
    result = await asyncio.wait_for(default_tools().run("exec", {"command": command, "timeout": 0.3}, ctx), WAIT_LIMIT)
    assert result.is_error
    assert await wait_dead(int((workspace / "child.pid").read_text()))


async def test_exec_returns_when_a_background_child_keeps_the_output_open(workspace: Path) -> None:
    """Our choice: after the shell exits, children still holding the pipe get the drain grace, then are killed."""
    command = "sleep 30 & echo $! > child.pid; echo launched"
    result = await asyncio.wait_for(default_tools().run("exec", {"command": command}, make_ctx(workspace)), WAIT_LIMIT)
    assert result.output == "launched\n[exit code 0]"
    assert await wait_dead(int((workspace / "child.pid").read_text()))


async def test_exec_output_keeps_head_and_tail_with_an_omission_notice(workspace: Path) -> None:
    """Our choice: output past the cap keeps its first and last halves; the middle is named, not silently lost."""
    result = await default_tools().run("exec", {"command": "seq 1 20000"}, make_ctx(workspace, exec_output_cap=1000))
    lines = result.output.splitlines()
    assert lines[:3] == ["1", "2", "3"]
    assert lines[-2:] == ["20000", "[exit code 0]"]
    assert any(line.startswith("[... ") and line.endswith(" bytes of output omitted ...]") for line in lines)
    assert len(result.output) < 1200


async def test_exec_streams_live_output_only_up_to_the_stream_cap(workspace: Path) -> None:
    """yuke: tool.output_delta carries at most the per-call stream cap; a notice says the stream stopped."""
    deltas: list[str] = []
    ctx = make_ctx(workspace, on_output=deltas.append, stream_output_cap=100)
    result = await default_tools().run("exec", {"command": "seq 1 5000"}, ctx)
    streamed = "".join(deltas)
    head, notice = streamed[:100], streamed[100:]
    assert head == "".join(f"{n}\n" for n in range(1, 5001))[:100]
    assert notice.strip() == "[live output stops after 100 bytes; the command goes on]"
    assert result.output.endswith("5000\n[exit code 0]")


async def test_exec_streams_output_while_the_command_runs_in_order(workspace: Path) -> None:
    """Task brief: output deltas arrive live and in order; the command waits until the test has seen `first`."""
    deltas: list[str] = []

    def on_output(text: str) -> None:
        deltas.append(text)
        if "first" in "".join(deltas):
            (workspace / "go").touch()

    command = "echo first; while [ ! -e go ]; do sleep 0.01; done; echo second; echo third"
    ctx = make_ctx(workspace, on_output=on_output)
    result = await asyncio.wait_for(default_tools().run("exec", {"command": command}, ctx), WAIT_LIMIT)
    assert "".join(deltas) == "first\nsecond\nthird\n"
    assert result.output == "first\nsecond\nthird\n[exit code 0]"


async def test_cancelling_a_running_exec_kills_its_processes_and_propagates(workspace: Path) -> None:
    """Task brief: cancellation kills the process group, then CancelledError propagates."""
    started = asyncio.Event()

    def on_output(text: str) -> None:
        if "started" in text:
            started.set()

    command = "sleep 30 & echo $! > child.pid; echo started; wait"
    ctx = make_ctx(workspace, on_output=on_output)
    task = asyncio.ensure_future(default_tools().run("exec", {"command": command}, ctx))
    await asyncio.wait_for(started.wait(), WAIT_LIMIT)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, WAIT_LIMIT)
    assert await wait_dead(int((workspace / "child.pid").read_text()))


async def test_cancelling_after_the_shell_exited_still_kills_children_holding_the_output(workspace: Path) -> None:
    """Task brief: cancellation kills the whole group, even once its leader (the shell) is gone."""
    started = asyncio.Event()

    def on_output(text: str) -> None:
        if "started" in text:
            started.set()

    command = "echo $$ > shell.pid; sleep 30 & echo $! > child.pid; echo started"
    ctx = make_ctx(workspace, on_output=on_output, drain_grace=60.0)
    task = asyncio.ensure_future(default_tools().run("exec", {"command": command}, ctx))
    await asyncio.wait_for(started.wait(), WAIT_LIMIT)
    assert await wait_dead(int((workspace / "shell.pid").read_text()))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, WAIT_LIMIT)
    assert await wait_dead(int((workspace / "child.pid").read_text()))


async def test_exec_reports_a_command_killed_by_a_signal(workspace: Path) -> None:
    """Our choice: a signal death is named, not shown as a negative exit code."""
    result = await default_tools().run("exec", {"command": "kill -9 $$"}, make_ctx(workspace))
    assert result.is_error
    assert result.output == "(no output)\n[killed by signal SIGKILL]"


async def test_exec_with_malformed_arguments_gives_error_results(workspace: Path) -> None:
    """Task brief: invalid arguments are error results, never exceptions."""
    ctx = make_ctx(workspace)
    bad: list[dict[str, object]] = [
        {},
        {"command": ""},
        {"command": 5},
        {"command": "true", "timeout": -1},
        {"command": "true", "timeout": "x"},
        {"command": "echo a\x00b"},
    ]
    for args in bad:
        result = await default_tools().run("exec", args, ctx)
        assert result.is_error, args


async def test_exec_in_a_vanished_workspace_is_an_error_result(workspace: Path) -> None:
    """Our choice: a spawn failure (OSError) becomes an error result."""
    ctx = make_ctx(workspace)
    os.rmdir(workspace)
    result = await default_tools().run("exec", {"command": "true"}, ctx)
    assert result.is_error

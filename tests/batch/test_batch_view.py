"""The live progress view of `omniagent batch` on a real pty, and what the command says about bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from omniagent.testing import FakeLLMServer, Scenario
from tests.batch.support import scenario, tasks, trajectories, write_tasks
from tests.pty_terminal import Terminal
from tests.runtime.adapters.engine.harness import child_env


def test_the_live_view_shows_counts_running_tasks_and_their_last_line_then_the_summary(tmp_path: Path) -> None:
    """On a terminal: the header counts (running 2 at -j 2), one row per running task with its agent and last
    line (the tool it ran), then `done 4/4` and the per-agent summary table."""
    task_file = write_tasks(tmp_path / "tasks.jsonl", tasks(4, agent="omniagent"))
    with FakeLLMServer(Scenario.from_json(scenario(4, answer_delay=1.0))) as llm:
        env = child_env(tmp_path, llm)
        with Terminal("batch", str(task_file), "-j", "2", "--out", str(tmp_path / "out"), cwd=tmp_path, env=env) as t:
            t.expect("running 2")
            t.expect("t0")
            t.expect("omniagent")
            t.expect("▸ ")
            t.expect("done 4/4")
            t.expect("omniagent batch")
            summary = t.expect("│")
            code = t.wait()
    assert code == 0, t.screen[-3000:]
    assert "completed" in summary or "completed" in t.screen
    last_row = next(line for line in reversed(t.screen.splitlines()) if line.startswith("│ omniagent"))
    assert last_row.split("│")[2].strip() == "4"  # runs
    assert last_row.split("│")[3].strip() == "4"  # completed
    assert len(trajectories(tmp_path / "out")) == 4


def test_a_bad_task_file_names_the_line_and_the_field_and_exits_2(tmp_path: Path) -> None:
    """Bad input gets one clear sentence on stderr (no traceback), exit code 2, and nothing runs."""
    import subprocess

    bad = tmp_path / "tasks.jsonl"
    bad.write_text('{"id": "a", "prompt": "x", "agent": "omniagent"}\n{"id": "b", "prompt": "", "agent": "x"}\n')
    done = subprocess.run(
        [sys.executable, "-m", "omniagent", "batch", str(bad), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=child_env(tmp_path, None),
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert f"{bad}:2: prompt:" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()
    no_agent = tmp_path / "no-agent.jsonl"
    no_agent.write_text(json.dumps({"id": "a", "prompt": "x"}) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "omniagent", "batch", str(no_agent)],
        capture_output=True,
        text=True,
        env=child_env(tmp_path, None),
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 2
    assert "task 'a' names no agent" in done.stderr and "--agent" in done.stderr
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.jsonl").write_text("not json\n")
    done = subprocess.run(
        [sys.executable, "-m", "omniagent", "batch", str(bad.with_name("ok.jsonl")), "--out", str(out)],
        capture_output=True,
        text=True,
        env=child_env(tmp_path, None),
        timeout=60,
    )
    assert done.returncode == 2
    assert "ok.jsonl: cannot read the task file" in done.stderr
    bad.with_name("ok.jsonl").write_text(json.dumps({"id": "a", "prompt": "x", "agent": "omniagent"}) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "omniagent", "batch", str(bad.with_name("ok.jsonl")), "--out", str(out)],
        capture_output=True,
        text=True,
        env=child_env(tmp_path, None),
        timeout=60,
    )
    assert done.returncode == 2
    assert f"{out / 'results.jsonl'}:1: not a batch result" in done.stderr and "Traceback" not in done.stderr

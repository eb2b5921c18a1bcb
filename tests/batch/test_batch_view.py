"""The live progress view of `omniagent batch` on a real pty, and what the command says about bad input."""

from __future__ import annotations

import json
import subprocess
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


ID_RULE = "an id is 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit"


def _batch(tmp_path: Path, *args: str, path: str = "/usr/bin:/bin") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "omniagent", "batch", *args],
        capture_output=True,
        text=True,
        env=child_env(tmp_path, None) | {"PATH": path},
        cwd=tmp_path,
        timeout=60,
    )


def test_an_agent_id_that_is_a_path_is_refused_before_anything_touches_the_disk(tmp_path: Path) -> None:
    """Issue 23: agent ids become directory names (OUT/tasks/TASK/AGENT), so `../../../victim`, in the task file or
    in --agent, is refused like a bad task id: exit 2, one sentence naming it, no traceback, and neither the
    directory it points at (a file and a subdirectory in it) nor --out is touched."""
    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "keep.txt").write_text("keep\n")
    out = tmp_path / "out"
    in_file = write_tasks(tmp_path / "in-file.jsonl", [{"id": "t1", "prompt": "hi", "agent": "../../../victim"}])
    listed = write_tasks(tmp_path / "listed.jsonl", [{"id": "t1", "prompt": "hi", "agent": ["omniagent", "a/b"]}])
    no_agent = write_tasks(tmp_path / "no-agent.jsonl", [{"id": "t1", "prompt": "hi"}])
    cases = [
        ([str(in_file)], f"{in_file}:1: agent id '../../../victim'"),
        ([str(listed)], f"{listed}:1: agent id 'a/b'"),
        ([str(no_agent), "--agent", "omniagent", "--agent", "../../../victim"], "agent id '../../../victim'"),
    ]
    for args, named in cases:
        done = _batch(tmp_path, *args, "--out", str(out))
        assert done.returncode == 2, done.stderr
        assert done.stderr == f"omniagent batch: error: {named} is not valid: {ID_RULE}\n"
        assert done.stdout == ""
        assert not out.exists()
        assert sorted(p.name for p in victim.iterdir()) == ["keep.txt", "sub"]
        assert (victim / "keep.txt").read_text() == "keep\n"


def test_off_a_terminal_each_run_is_one_line_even_when_the_agent_wrote_several(tmp_path: Path) -> None:
    """Issue 23: an agent that writes two lines to stderr and exits 1 during the handshake: off a terminal its run is
    still one line, the stderr lines joined by ⏎ (the whole error stays in result.json)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    qwen = bin_dir / "qwen"  # an agent omniagent knows, found on PATH
    qwen.write_text('#!/bin/sh\necho "first stderr line" >&2\necho "second stderr line" >&2\nexit 1\n')
    qwen.chmod(0o755)
    task_file = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t1", "prompt": "hi", "agent": "qwen"}])
    done = _batch(tmp_path, str(task_file), "--out", str(tmp_path / "out"), path=f"{bin_dir}:/usr/bin:/bin")
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("t1 [qwen] failed in "), lines[0]
    assert lines[0].endswith("(exit status: 1) ⏎ first stderr line ⏎ second stderr line"), lines[0]
    error = json.loads((tmp_path / "out" / "tasks" / "t1" / "qwen" / "result.json").read_text())["error"]
    assert error.endswith("(exit status: 1)\nfirst stderr line\nsecond stderr line")


def test_the_summary_in_a_pipe_shows_every_agent_id_whole(tmp_path: Path) -> None:
    """Issue 23: stdout a pipe (80 columns by default): the summary is as wide as it needs, each agent's row
    starting with its whole id and every header on one line."""
    agents = ["claude-code-acp-nightly", "opencode-acp-nightly", "an-agent-with-a-long-name-nobody-knows"]
    task_file = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t1", "prompt": "hi"}])
    args = [str(task_file), "--out", str(tmp_path / "out")]
    for agent in agents:
        args += ["--agent", agent]
    done = _batch(tmp_path, *args)  # omniagent knows none of them: each run fails at once
    assert done.returncode == 1, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("│ ")]
    assert sorted(row.split("│")[1].strip() for row in rows) == sorted(agents)
    header = next(line for line in done.stdout.splitlines() if line.startswith("┃ "))
    assert [cell.strip() for cell in header.split("┃")[1:-1]] == [
        "agent",
        "runs",
        "completed",
        "failed",
        "timed out",
        "median time",
        "total cost",
    ]


def test_an_out_directory_the_batch_cannot_write_into_is_one_sentence_not_a_traceback(tmp_path: Path) -> None:
    """--out where `tasks` is a file: the run's files cannot be written; exit 2 with one sentence naming the path
    (no "internal error: ExceptionGroup"). --out that is itself a file: its results.jsonl cannot be read, exit 2."""
    task_file = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t1", "prompt": "hi", "agent": "omniagent"}])
    out = tmp_path / "out"
    out.mkdir()
    (out / "tasks").write_text("not a directory\n")
    done = _batch(tmp_path, str(task_file), "--out", str(out))
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"omniagent batch: error: cannot write the batch's files under {out}: Not a directory: "
        f"{out / 'tasks' / 't1' / 'omniagent'}\n"
    )
    done = _batch(tmp_path, str(task_file), "--out", str(out / "tasks"))
    assert done.returncode == 2, done.stderr
    results = out / "tasks" / "results.jsonl"
    assert done.stderr == f"omniagent batch: error: {results}: cannot read it: Not a directory\n"

"""Harbor-task batch figures: trials per minute of `omniagent batch DIR --agent oracle` over many tiny Harbor task
folders, locally and on a local Ray cluster, and what omniagent adds per trial over running the task's scripts by
hand.

Run: `python benchmarks/batch_harbor.py [--tasks 200] [--jobs 4] [--repeat 3] [--no-ray]` (one line per figure; a
figure over runs is their median).

The tasks are generated in a temporary directory, each the smallest Harbor task that still does the whole round:
`solution/solve.sh` writes one file in the workdir (`/app`), `tests/test.sh` checks it and writes
`/logs/verifier/reward.txt`. The batch is the real CLI in a subprocess, as a user runs it (`--out` a fresh
directory each time), so its figures include starting Python and, with `--ray`, starting the cluster.

Figures:
- **trials/min** = trials / the command's wall time (process start to exit), at `-j JOBS`, locally and with `--ray`
  (a local cluster of JOBS CPUs, started by the command).
- **steady trials/min** = trials / (the last trial's end - the first trial's start), from `results.jsonl` times: the
  rate once running, without the process's (and the cluster's) start and the end's `job.json`; **first trial after**
  is the time from the command's start to the first trial's (Python's start, the plan, with `--ray` the cluster's).
- **by hand** = the median time of running `bash solution/solve.sh` then `bash tests/test.sh` in a fresh directory
  from this process, without a sandbox, one after the other (two `bash` processes, nothing else), the reward file
  redirected to a temporary directory (test.sh writes into `$VERIFIER_LOGS`, `/logs/verifier` when unset).
- **overhead per trial** = the median of the trials' `timings.total_seconds` in a `-j 1` run (one at a time, so no
  trial waits for a CPU another holds) - by hand. `total_seconds` is what a trial takes inside the batch from
  preparing its workspace to its reward: the workspace and its git baseline, the solution in the sandbox (bubblewrap,
  seccomp, cgroup limits), the diff, the verifier in the sandbox, reading the reward. Not in it: the trial's output
  files and its fsynced `results.jsonl` line, written by the driver after it; the **batch per trial** figure (the
  `-j 1` command's wall time / trials - by hand) includes those and the process start, spread over the trials.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SOLVE = "#!/bin/bash\necho done > out.txt\n"
TEST = """#!/bin/bash
logs="${VERIFIER_LOGS:-/logs/verifier}"
if [ "$(cat out.txt)" = done ]; then echo 1 > "$logs/reward.txt"; else echo 0 > "$logs/reward.txt"; fi
"""
TOML = (
    'version = "1.0"\n\n[agent]\ntimeout_sec = 60\n\n[verifier]\ntimeout_sec = 60\n\n[environment]\nworkdir = "/app"\n'
)


def make_tasks(root: Path, count: int) -> Path:
    """`count` tiny Harbor task folders under `root/tasks`."""
    tasks = root / "tasks"
    for i in range(count):
        folder = tasks / f"tiny-{i:03d}"
        files = {
            "task.toml": TOML,
            "instruction.md": "Write done into out.txt.\n",
            "solution/solve.sh": SOLVE,
            "tests/test.sh": TEST,
        }
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
    return tasks


Run = tuple[float, list[dict[str, Any]], float]  # wall seconds, the results, seconds from the start to the first trial


def batch(tasks: Path, out: Path, jobs: int, *, ray: bool) -> Run:
    """One `omniagent batch` run: its wall time, its results (every trial must have scored 1), and when its first
    trial began."""
    command = [sys.executable, "-m", "omniagent", "batch", str(tasks), "--agent", "oracle"]
    command += ["-j", str(jobs), "--out", str(out), *(["--ray"] if ray else [])]
    began = time.time()
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"the batch failed ({done.returncode}): {done.stderr[-2000:]}")
    found = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    if any(result["rewards"] != {"reward": 1.0} for result in found):
        raise SystemExit("a trial did not score 1: the benchmark's tasks are wrong")
    return elapsed, found, min(float(result["timings"]["started_at"]) for result in found) - began


def steady(found: list[dict[str, Any]]) -> float:
    """Seconds from the first trial's start to the last one's end."""
    times = [result["timings"] for result in found]
    first = min(float(t["started_at"]) for t in times)
    last = max(float(t["started_at"]) + float(t["total_seconds"]) for t in times)
    return last - first


def by_hand(task: Path, scratch: Path, runs: int) -> float:
    """The median seconds of solve.sh then test.sh, unsandboxed, each run in a fresh directory."""
    seconds = []
    for n in range(runs):
        work, logs = scratch / f"hand-{n}", scratch / f"hand-{n}-logs"
        work.mkdir()
        logs.mkdir()
        env = os.environ | {"VERIFIER_LOGS": str(logs)}
        start = time.perf_counter()
        subprocess.run(["bash", str(task / "solution" / "solve.sh")], cwd=work, check=True, env=env)
        subprocess.run(["bash", str(task / "tests" / "test.sh")], cwd=work, check=True, env=env)
        seconds.append(time.perf_counter() - start)
        if (logs / "reward.txt").read_text() != "1\n":
            raise SystemExit("by hand, the task did not score 1")
    return statistics.median(seconds)


def trial_ms(runs: list[Run]) -> float:
    """The median over runs of the median trial's `timings.total_seconds`, in ms."""
    return 1000 * statistics.median(
        statistics.median(float(result["timings"]["total_seconds"]) for result in found) for _, found, _ in runs
    )


def rate(count: int, seconds: float) -> str:
    return f"{count * 60 / seconds:,.0f} trials/min"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-ray", action="store_true", help="the local figures only")
    args = parser.parse_args()
    count, jobs = args.tasks, args.jobs
    with tempfile.TemporaryDirectory() as name:
        root = Path(name)
        tasks = make_tasks(root, count)
        hand = by_hand(tasks / "tiny-000", root, 50)
        batch(tasks, root / "warm-up", jobs, ray=False)  # the page cache, bytecode
        backends = [False] if args.no_ray else [False, True]
        for ray in backends:
            runs = [batch(tasks, root / f"{'ray' if ray else 'local'}-{n}", jobs, ray=ray) for n in range(args.repeat)]
            wall = statistics.median(elapsed for elapsed, _, _ in runs)
            running = statistics.median(steady(found) for _, found, _ in runs)
            first = statistics.median(first for _, _, first in runs)
            where = "--ray" if ray else "local"
            print(f"{where} -j {jobs}: {count} trials in {wall:.1f} s = {rate(count, wall)}", end="")
            print(f" (first trial after {first:.1f} s; steady: {running:.1f} s = {rate(count, running)};", end="")
            print(f" a trial: {trial_ms(runs):.0f} ms)")
        one = [batch(tasks, root / f"j1-{n}", 1, ray=False) for n in range(args.repeat)]
        inside = trial_ms(one) / 1000
        per_trial = statistics.median(elapsed for elapsed, _, _ in one) / count
        print(f"by hand (solve.sh + test.sh, unsandboxed): {hand * 1000:.0f} ms")
        print(f"local -j 1: a trial's total_seconds, median: {inside * 1000:.0f} ms")
        print(f"overhead per trial (total_seconds at -j 1 - by hand): {(inside - hand) * 1000:.0f} ms")
        print(f"batch per trial (-j 1 wall time / trials - by hand): {(per_trial - hand) * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

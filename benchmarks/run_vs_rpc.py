"""`omniagent run` against the same turn through `omniagent rpc`, side by side in one run: what `run` adds.

    python benchmarks/run_vs_rpc.py [--runs N] [--src DIR]

Both answer one prompt with our engine against the same fake LLM on 127.0.0.1 (a one-line text answer), with a
fresh HOME, the engine's data dir holding a providers.json whose fake providers have keys (so `run` picks the
engine, docs/run.md), and no provider key in the environment. The clock runs from spawn to exit:
- `omniagent run --yes PROMPT` in a workspace directory (it exits when the turn ends);
- `omniagent rpc`, driven as a client would: `session.create` for the same workspace, `session.send_input` once
  the session exists, then stdin is closed when `run.done` arrives and the process exits.
Runs alternate between the two. It prints the medians and the difference (target: `run` ≤ 50 ms over `rpc`), in
wall-clock time and in CPU time (user + system of the process and the children it waited for, e.g. the login
shell of discovery): on a shared machine the CPU figure moves far less with the load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package holds write_providers

from tests.engine.rpc_harness import write_providers

from omniagent.testing import FakeLLMServer, Reply, Scenario

PROMPT = "say hello"
WAIT = 60.0  # seconds: bound on one subject's run


def _env(home: Path, data: Path, src: str | None) -> dict[str, str]:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "OMNIAGENT_DATA_DIR": str(data)}
    if src is not None:
        env["PYTHONPATH"] = src
    return env


def children_cpu() -> float:
    """CPU seconds (user + system) of the children waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_run(workspace: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "omniagent", "run", "--yes", PROMPT],
        cwd=workspace,
        env=env,
        capture_output=True,
        timeout=WAIT,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or b"hello" not in done.stdout:
        raise SystemExit(f"omniagent run failed ({done.returncode}): {done.stdout[-500:]!r} {done.stderr[-2000:]!r}")
    return elapsed


def time_rpc(workspace: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "omniagent", "rpc"],
        cwd=workspace,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(request: dict[str, object]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(request).encode() + b"\n")
        proc.stdin.flush()

    def until(predicate: object) -> dict[str, object]:
        assert proc.stdout is not None and callable(predicate)
        while line := proc.stdout.readline():
            value: dict[str, object] = json.loads(line)
            if predicate(value):
                return value
        raise SystemExit("omniagent rpc closed its output")

    try:
        send({"id": "create", "method": "session.create", "params": {"workspace_path": str(workspace)}})
        created = until(lambda v: v.get("id") == "create")
        sid = created["result"]["session"]["id"]  # type: ignore[index]
        content = {"type": "content", "content": [{"type": "text", "text": PROMPT}]}
        send({"id": "send", "method": "session.send_input", "params": {"session_id": sid, "input": content}})
        done = until(lambda v: v.get("method") == "run.done")
        assert done["params"]["outcome"]["type"] == "turn", done  # type: ignore[index]
        proc.stdin.close()
        proc.wait(WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--src", help="run omniagent from this source dir (PYTHONPATH), e.g. an older checkout")
    args = parser.parse_args()
    subjects = {"omniagent rpc": time_rpc, "omniagent run --yes": time_run}
    wall: dict[str, list[float]] = {name: [] for name in subjects}
    cpu: dict[str, list[float]] = {name: [] for name in subjects}
    with tempfile.TemporaryDirectory() as root, FakeLLMServer(Scenario()) as llm:
        llm.enqueue(Reply(text="hello from the fake model", sticky=True))
        home, data, workspace = (Path(root) / name for name in ("home", "data", "workspace"))
        for path in (home, workspace):
            path.mkdir()
        write_providers(data, llm)
        env = _env(home, data, args.src)
        for run in range(args.runs + 1):  # the first of each is a warm-up: first-run disk caches are not start-up
            for name, subject in subjects.items():
                before = children_cpu()
                elapsed = subject(workspace, env)
                if run > 0:
                    wall[name].append(elapsed * 1000)
                    cpu[name].append((children_cpu() - before) * 1000)
    print(f"one turn against the fake LLM, spawn → exit, median of {args.runs} runs (ms):")
    for name in subjects:
        times = wall[name]
        print(
            f"  {name:<22} wall {statistics.median(times):6.0f} (min {min(times):.0f}, max {max(times):.0f}), "
            f"CPU {statistics.median(cpu[name]):5.0f}"
        )
    for label, figures in (("wall", wall), ("CPU", cpu)):
        extra = statistics.median(figures["omniagent run --yes"]) - statistics.median(figures["omniagent rpc"])
        print(f"omniagent run over omniagent rpc, {label}: {extra:+.0f} ms (target <= 50 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Spawn → first reply of our three faces, side by side with the floor and the peers, in one run; RSS after it.

    python benchmarks/startup.py [--runs N] [--src DIR]

Every process runs the same way: inside one loopback-only network namespace (the real-agent harness,
tests/e2e/agents/harness.py, with the fake LLM holding it), with a fresh HOME and `env -i`. Per subject the clock
runs from spawn to the first complete line of the answer:
- `omniagent acp`: the ACP `initialize` reply (protocolVersion 1);
- `omniagent rpc`: the yuke `initialize` reply;
- `omniagent serve`: the sidecar's hello line (written unasked);
- `python -c "import asyncio"`: the floor, a line printed after importing asyncio;
- codex-acp and claude-code-acp (the pinned npm installs, `scripts/install_agents.py`): their ACP `initialize` reply.
Runs alternate between subjects (claude-code-acp runs after the others, in its own world) so load hits them
alike. It prints per subject the median and the
ratio to its reference (the floor for serve and rpc; the peers for acp), then the RSS of the process tree right
after the reply (median, MB).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package holds the harness

from tests.e2e.agents.harness import World, agent_world, plain_scenario

ACP_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": 1, "clientCapabilities": {}},
}
RPC_INIT = {"id": "1", "method": "initialize", "params": {}}
FLOOR = "import asyncio, sys; sys.stdout.write('ready\\n'); sys.stdout.flush(); sys.stdin.read()"
EXIT_GRACE = 2.0  # seconds a subject gets to exit on EOF before its process group is killed


@dataclass
class Subject:
    name: str
    argv: list[str]
    request: dict[str, object] | None  # None: the process speaks first
    times: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)


def tree_rss_mb(pid: int) -> float:
    """Resident memory of `pid` and its descendants, MB (a launcher's children count: node → the Rust binary)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo.extend(children.get(current, []))
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def measure(subject: Subject, cwd: Path) -> None:
    start = time.perf_counter()
    proc = subprocess.Popen(
        subject.argv,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own group: a launcher's children are stopped with it
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        if subject.request is not None:
            proc.stdin.write(json.dumps(subject.request).encode() + b"\n")
            proc.stdin.flush()
        line = proc.stdout.readline()
        elapsed = time.perf_counter() - start
        if not line:
            assert proc.stderr is not None
            raise SystemExit(f"{subject.name} closed stdout before answering: {proc.stderr.read()[-2000:]!r}")
        if subject.request is not None:
            reply = json.loads(line)
            assert "result" in reply, f"{subject.name}: {line[:300]!r}"
        subject.times.append(elapsed)
        subject.rss.append(tree_rss_mb(proc.pid))
    finally:
        proc.stdin.close()
        # Not every agent exits on EOF at once (codex-acp's npm launcher): then its group is stopped.
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=EXIT_GRACE)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def ours(world: World, home: Path, face: str, src: str | None) -> list[str]:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "OMNIAGENT_DATA_DIR": str(home / "data")}
    if src is not None:
        env["PYTHONPATH"] = src
    return [*world.enter, "env", "-i", *(f"{k}={v}" for k, v in env.items()), sys.executable, "-m", "omniagent", face]


def measure_all(subjects: list[Subject], runs: int, cwd: Path) -> None:
    for subject in subjects:  # one warm-up each: first-run disk caches are not start-up
        measure(subject, cwd)
        subject.times.clear()
        subject.rss.clear()
    for _ in range(runs):
        for subject in subjects:
            measure(subject, cwd)


async def run(runs: int, src: str | None) -> list[Subject]:
    """One world (namespace + fake LLM) at a time: ours, the floor and codex-acp in codex-acp's, then
    claude-code-acp in its own."""
    with tempfile.TemporaryDirectory() as codex_root:
        async with agent_world("codex-acp", Path(codex_root), plain_scenario()) as codex:
            home = Path(codex_root) / "ours"
            home.mkdir()
            plain = [*codex.enter, "env", "-i", f"HOME={home}"]
            subjects = [
                Subject("python -c 'import asyncio' (floor)", [*plain, sys.executable, "-c", FLOOR], None),
                Subject("omniagent serve (hello)", ours(codex, home, "serve", src), None),
                Subject("omniagent rpc (initialize)", ours(codex, home, "rpc", src), RPC_INIT),
                Subject("omniagent acp (initialize)", ours(codex, home, "acp", src), ACP_INIT),
                Subject("codex-acp (initialize)", codex.argv, ACP_INIT),
            ]
            measure_all(subjects, runs, codex.work)
    with tempfile.TemporaryDirectory() as claude_root:
        async with agent_world("claude-code-acp", Path(claude_root), plain_scenario()) as claude:
            subjects.append(Subject("claude-code-acp (initialize)", claude.argv, ACP_INIT))
            measure_all(subjects[-1:], runs, claude.work)
    return subjects


def report(subjects: list[Subject], runs: int) -> None:
    median = {s.name: statistics.median(s.times) * 1000 for s in subjects}
    floor, serve, rpc, acp, codex, claude = (s.name for s in subjects)
    print(f"spawn → first reply, median of {runs} runs (ms), in the loopback-only namespace, fresh HOME:")
    for s in subjects:
        print(f"  {s.name:<38} {median[s.name]:7.0f}  (min {min(s.times) * 1000:.0f}, max {max(s.times) * 1000:.0f})")
    print("ratios:")
    for ours_name, ref in ((serve, floor), (rpc, floor), (acp, codex), (acp, claude)):
        print(f"  {ours_name:<30} / {ref:<38} {median[ours_name] / median[ref]:5.2f}x")
    print("RSS of the process tree after the reply, median (MB):")
    for s in subjects:
        print(f"  {s.name:<38} {statistics.median(s.rss):7.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--src", help="run omniagent from this source dir (PYTHONPATH), e.g. an older checkout")
    args = parser.parse_args()
    report(asyncio.run(run(args.runs, args.src)), args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

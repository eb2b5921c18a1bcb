"""`omniagent serve` speed: time to the hello line, and unpaced event throughput.

1. Start-up: wall time from spawning `python -m omniagent serve --mock turn` to reading its hello line
   (median of N runs; target ≤ 250 ms).
2. Throughput: one mock turn emitting 100,000 text deltas with no pacing, read by a fast client (big `os.read`
   chunks, lines only counted); events per second from sending the prompt to reading `TurnEnded`
   (target ≥ 50,000 events/s). A reader slower than the sidecar would make the session close as lagging (G6);
   the run then reports that instead of a figure.

    python benchmarks/sidecar.py [--runs N] [--deltas N]
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

SERVE = [sys.executable, "-m", "omniagent", "serve"]
CHUNK = 1 << 20


def time_to_hello(runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen([*SERVE, "--mock", "turn"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdin is not None
        line = proc.stdout.readline()
        times.append(time.perf_counter() - start)
        assert json.loads(line)["hello"]["protocol"] == 1, line
        proc.stdin.close()
        proc.wait(timeout=10)
    return times


def throughput(deltas: int, script_dir: Path) -> tuple[int, float, int]:
    """(events read, seconds from prompt to TurnEnded, bytes read)."""
    script = script_dir / "flood.json"
    step = {"Emit": {"TextDelta": {"message_id": "m1", "text": "x"}}}
    turn = [{"Repeat": {"times": deltas, "steps": [step]}}, {"End": {"Completed": {"source": "Protocol"}}}]
    script.write_text(json.dumps({"turns": [turn]}))
    proc = subprocess.Popen([*SERVE, "--mock", str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdin is not None
    out = proc.stdout.fileno()
    pending = b""
    while b"\n" not in pending:
        pending += os.read(out, CHUNK)
    proc.stdin.write(b'{"id":1,"cmd":"open","agent":"mock","dir":"."}\n')
    proc.stdin.flush()
    while b'"id":1,' not in pending:
        pending += os.read(out, CHUNK)
    start = time.perf_counter()
    proc.stdin.write(b'{"id":2,"cmd":"prompt","session":"s1","text":"go"}\n')
    proc.stdin.flush()
    lines, total, tail = 0, 0, b""
    while True:
        chunk = os.read(out, CHUNK)
        if not chunk:
            raise SystemExit("the sidecar exited before the turn ended")
        lines += chunk.count(b"\n")
        total += len(chunk)
        window = tail + chunk
        if b'"TurnEnded"' in window:
            break
        if b'{"closed":"s1"}' in window:
            raise SystemExit(f"the session closed as lagging after {lines} lines: the sidecar outran this reader")
        tail = chunk[-64:]
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(timeout=10)
    return lines - 1, elapsed, total  # minus the prompt's reply line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--deltas", type=int, default=100_000)
    args = parser.parse_args()
    hello = time_to_hello(args.runs)
    print(f"omniagent serve: process start → hello line, {args.runs} runs:")
    print(
        f"  median {statistics.median(hello) * 1000:.0f} ms  (min {min(hello) * 1000:.0f}, max {max(hello) * 1000:.0f})"
        "   target ≤ 250 ms"
    )
    with tempfile.TemporaryDirectory() as tmp:
        events, seconds, size = throughput(args.deltas, Path(tmp))
    print(f"omniagent serve: unpaced flood of {args.deltas:,} text deltas, fast reader:")
    print(
        f"  {events / seconds:,.0f} events/s  ({events:,} events in {seconds:.2f} s, {size / seconds / 1e6:.1f} MB/s)"
        "   target ≥ 50,000 events/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

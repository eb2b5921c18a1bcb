"""`omniagent serve` speed: time to the hello line, and unpaced event throughput against a bare writer.

1. Start-up: wall time from spawning `python -m omniagent serve --mock turn` to reading its hello line (median
   of N runs; benchmarks/startup.py compares it with the floor and the peers).
2. Throughput: one mock turn emitting 100,000 text deltas with no pacing, read by a fast client (big `os.read`
   chunks, lines only counted); events per second from sending the prompt to reading `TurnEnded`. In the same run,
   alternating, the floor: a bare Python loop that builds the same event line as a dict and writes it with the
   stdlib `json` to a buffered stdout, read by the same reader. It prints both medians and the ratio, and how many
   of the unpaced turns closed the session as lagging (G6: the sidecar outran a reader that keeps up).

    python benchmarks/sidecar.py [--runs N] [--deltas N] [--floods N] [--stall-ms MS]
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


FLOOR_WRITER = """
import json, sys, time
count = int(sys.argv[1])
out = sys.stdout
sys.stdin.readline()
for sequence in range(1, count + 1):
    ns = time.time_ns()
    line = {"event": {"sequence": sequence, "occurred_at": {"secs_since_epoch": ns // 1_000_000_000,
            "nanos_since_epoch": ns % 1_000_000_000}, "session_id": "s1",
            "turn_info": {"id": "t1", "parent_tool_id": None},
            "kind": {"TextDelta": {"message_id": "m1", "text": "x"}}, "extensions": {}}}
    out.write(json.dumps(line, separators=(",", ":")) + "\\n")
out.write('{"event":{"kind":{"TurnEnded":{}}}}\\n')
out.flush()
"""


class Lagged(Exception):
    """The sidecar closed the session as lagging: it outran this reader."""


STALL_EVERY = 2 << 20  # bytes between the reader's stalls (with --stall-ms)


def read_until_turn_end(out: int, stall: float = 0.0) -> tuple[int, int]:
    """(lines, bytes) read in big chunks until a TurnEnded line; raises Lagged on the session's close line. With
    `stall` (seconds) the reader stops that long after every STALL_EVERY bytes: a reader that keeps up on average
    but is not always scheduled, as on a busy machine."""
    lines, total, tail, next_stall = 0, 0, b"", STALL_EVERY
    while True:
        if stall and total >= next_stall:
            time.sleep(stall)
            next_stall += STALL_EVERY
        chunk = os.read(out, CHUNK)
        if not chunk:
            raise SystemExit("the writer exited before the turn ended")
        lines += chunk.count(b"\n")
        total += len(chunk)
        window = tail + chunk
        if b'"TurnEnded"' in window:
            return lines, total
        if b'{"closed":"s1"}' in window:
            raise Lagged(f"the session closed as lagging after {lines} lines")
        tail = chunk[-64:]


def throughput(deltas: int, script_dir: Path, stall: float = 0.0) -> tuple[int, float, int]:
    """(events read, seconds from prompt to TurnEnded, bytes read). Raises Lagged."""
    script = script_dir / "flood.json"
    step = {"Emit": {"TextDelta": {"message_id": "m1", "text": "x"}}}
    turn = [{"Repeat": {"times": deltas, "steps": [step]}}, {"End": {"Completed": {"source": "Protocol"}}}]
    script.write_text(json.dumps({"turns": [turn]}))
    proc = subprocess.Popen([*SERVE, "--mock", str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdin is not None
    out = proc.stdout.fileno()
    try:
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
        lines, total = read_until_turn_end(out, stall)
        elapsed = time.perf_counter() - start
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
    return lines - 1, elapsed, total  # minus the prompt's reply line


def floor_throughput(deltas: int, stall: float = 0.0) -> tuple[int, float, int]:
    """The same lines from a bare loop: a dict per event, stdlib `json.dumps`, buffered stdout; same reader."""
    proc = subprocess.Popen(
        [sys.executable, "-c", FLOOR_WRITER, str(deltas)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stdin is not None
    try:
        start = time.perf_counter()
        proc.stdin.write(b"go\n")
        proc.stdin.flush()
        lines, total = read_until_turn_end(proc.stdout.fileno(), stall)
        elapsed = time.perf_counter() - start
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
    return lines - 1, elapsed, total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--deltas", type=int, default=100_000)
    parser.add_argument("--floods", type=int, default=10, help="unpaced turns to run (each counted for lag)")
    parser.add_argument("--stall-ms", type=float, default=0.0, help="the reader stops this long every 2 MiB")
    args = parser.parse_args()
    hello = time_to_hello(args.runs)
    print(f"omniagent serve: process start → hello line, {args.runs} runs:")
    print(
        f"  median {statistics.median(hello) * 1000:.0f} ms  (min {min(hello) * 1000:.0f}, max {max(hello) * 1000:.0f})"
    )
    ours, floor, lagged = [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.floods):  # alternate, so load hits both alike
            try:
                events, seconds, _size = throughput(args.deltas, Path(tmp), args.stall_ms / 1000)
                ours.append(events / seconds)
            except Lagged:
                lagged += 1
            events, seconds, _size = floor_throughput(args.deltas, args.stall_ms / 1000)
            floor.append(events / seconds)
    ours_median = statistics.median(ours) if ours else 0.0
    floor_median = statistics.median(floor)
    reader = f"reader stalling {args.stall_ms:g} ms every 2 MiB" if args.stall_ms else "fast reader"
    print(f"unpaced turn of {args.deltas:,} text deltas, {reader}, {args.floods} runs each (median events/s):")
    print(f"  omniagent serve          {ours_median:>11,.0f}")
    print(f"  bare stdlib-json writer  {floor_median:>11,.0f}")
    print(f"  ratio                    {ours_median / floor_median:11.2f}x")
    print(f"  lagging closes           {lagged} of {args.floods}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

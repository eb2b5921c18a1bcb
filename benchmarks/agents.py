"""Wall time of `omniagent agents` on a machine with no agent installed (issue target: under 0.5 s).

Runs the real command 10 times with an empty PATH and an empty HOME, keeping the user's $SHELL so the login-shell
PATH capture costs what it costs on this machine. Prints the median, then min and max.

    python benchmarks/agents.py [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="time `omniagent agents --json` instead")
    args = parser.parse_args()
    command = [sys.executable, "-m", "omniagent", "agents", *(["--json"] if args.json else [])]
    with tempfile.TemporaryDirectory() as home:
        env = {"PATH": "", "HOME": home}
        if "SHELL" in os.environ:
            env["SHELL"] = os.environ["SHELL"]
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True)
            times.append(time.perf_counter() - start)
    label = " ".join(command[3:])
    print(f"omniagent {label}, no agents installed, {args.runs} runs:")
    print(
        f"  median {statistics.median(times) * 1000:.0f} ms  (min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

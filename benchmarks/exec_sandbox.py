"""What the exec sandbox costs per command: the `exec` tool running `true`, for each named sandbox variant.

    python benchmarks/exec_sandbox.py [--runs N] [--rounds R] [--baseline-src DIR] [--variant NAME ...]

Each variant is a `SandboxPolicy` run through the real tool (`default_tools().run("exec", …)`: bubblewrap, the
filter, the output pipe, the start check), timed from the call to its result. Every variant runs in a child
process of its own, so one-time set-up (compiling the seccomp filter, asking bubblewrap what it supports) lands in
its first command, reported apart and left out of the figures; the variants take turns in `--rounds` rounds so a
machine that gets busier does not favour one. It prints the median and p90 per command and each variant's median
over the one above it: list the variants so that each adds one thing to the one before.

A variant marked `baseline` runs an older checkout's code (`--baseline-src`: the `src` folder of, e.g., a
`git archive` of the commit before a change) with the same policy, to measure what the change added; without
`--baseline-src` those variants are left out. To measure a new sandbox feature, add a variant: a name and a
function that builds its `SandboxPolicy`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from omniagent.engine.tools import ToolContext, default_tools
from omniagent.sandbox import SandboxPolicy

COMMAND = "true"
WAIT = 600.0  # seconds: bound on one child's share of a round
SOURCE = Path(__file__).resolve().parent.parent / "src"


@dataclass(frozen=True, slots=True)
class Variant:
    """A named way to run commands: `policy` builds its SandboxPolicy in the child (from the code it runs);
    `baseline` runs it with `--baseline-src` instead of this checkout."""

    name: str
    policy: Callable[[], SandboxPolicy]
    baseline: bool = False


def _allowlisted() -> SandboxPolicy:
    from omniagent.sandbox import NetworkRules, parse_rules

    return SandboxPolicy(mode="sandboxed", allowlist=NetworkRules(parse_rules(["pypi.org"])))


VARIANTS = (
    Variant("unsandboxed", lambda: SandboxPolicy(mode="unsandboxed")),
    Variant("sandboxed, before (baseline)", lambda: SandboxPolicy(mode="sandboxed"), baseline=True),
    Variant("sandboxed (filter and limits)", lambda: SandboxPolicy(mode="sandboxed")),
    # The bridge to the proxy starts in the sandbox; no connection is made: the floor of having the proxy at all.
    Variant("sandboxed, network allowlist", _allowlisted),
)


async def _time_commands(variant: Variant, runs: int) -> list[float]:
    """Seconds per `exec` of COMMAND under the variant's policy, the first (with one-time set-up) first."""
    tools = default_tools()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as workspace:
        ctx = ToolContext.for_workspace(workspace, sandbox=variant.policy())
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            result = await tools.run("exec", {"command": COMMAND}, ctx)
            times.append(time.perf_counter() - start)
            if result.is_error:
                raise SystemExit(f"{variant.name}: the command failed: {result.output}")
    return times


def _child(name: str, runs: int) -> None:
    variant = next(v for v in VARIANTS if v.name == name)
    print(json.dumps(asyncio.run(_time_commands(variant, runs + 1))))


def _run_child(variant: Variant, runs: int, baseline_src: Path | None) -> list[float]:
    src = baseline_src if variant.baseline else SOURCE
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(SOURCE.parent)])}
    argv = [sys.executable, __file__, "--child", variant.name, "--runs", str(runs)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=WAIT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{variant.name}: {done.stderr.strip() or done.stdout.strip()}")
    times: list[float] = json.loads(done.stdout)
    return times


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="commands per variant (default 200)")
    parser.add_argument("--rounds", type=int, default=4, help="turns the variants take (default 4)")
    parser.add_argument("--baseline-src", type=Path, help="the src folder of an older checkout, for baselines")
    parser.add_argument("--variant", action="append", help="run only these variants (by name)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.runs)
        return
    chosen = [
        v
        for v in VARIANTS
        if (args.variant is None or v.name in args.variant) and (args.baseline_src or not v.baseline)
    ]
    per_round = max(1, args.runs // args.rounds)
    times: dict[str, list[float]] = {v.name: [] for v in chosen}
    first: dict[str, list[float]] = {v.name: [] for v in chosen}
    for _ in range(args.rounds):
        for variant in chosen:
            got = _run_child(variant, per_round, args.baseline_src)
            first[variant.name].append(got[0])
            times[variant.name] += got[1:]
    load = os.getloadavg()[0]
    print(f"exec `{COMMAND}`, {per_round * args.rounds} commands per variant in {args.rounds} rounds; load {load:.2f}")
    print(f"{'variant':<32} {'median ms':>10} {'p90 ms':>8} {'first ms':>9} {'vs above':>9}")
    above = None
    for variant in chosen:
        median = statistics.median(times[variant.name])
        added = "" if above is None else f"{(median - above) * 1000:+.2f}"
        print(
            f"{variant.name:<32} {median * 1000:>10.2f} {_p90(times[variant.name]) * 1000:>8.2f} "
            f"{statistics.median(first[variant.name]) * 1000:>9.1f} {added:>9}"
        )
        above = median


if __name__ == "__main__":
    main()

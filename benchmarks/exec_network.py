"""What the exec sandbox's network allowlist costs per command: `true` run through the `exec` tool, sandboxed, with
the network off and in allowlist mode, alternating; the medians and their difference.

    python benchmarks/exec_network.py [--runs N]

Allowlist mode adds the bridge (the engine's interpreter started with `-I -S` inside the sandbox, which forks
and then becomes the command's shell) and the proxy's socketpair; no connection is made, so this is the floor a
command pays for having the proxy at all.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from omniagent.engine.tools import ToolContext, default_tools
from omniagent.engine.tools.shell.allowlist import NetworkRules, parse_rules
from omniagent.engine.tools.shell.sandbox import SandboxPolicy

SUBJECTS = {
    "off": SandboxPolicy(mode="sandboxed"),
    "allowlist": SandboxPolicy(mode="sandboxed", allowlist=NetworkRules(parse_rules(["pypi.org"]))),
}


async def _once(root: Path, policy: SandboxPolicy) -> float:
    ctx = ToolContext.for_workspace(root, sandbox=policy)
    began = time.perf_counter()
    result = await default_tools().run("exec", {"command": "true"}, ctx)
    elapsed = time.perf_counter() - began
    assert not result.is_error, result.output
    return elapsed


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as workspace:
        root = Path(workspace)
        for policy in SUBJECTS.values():
            await _once(root, policy)  # warm: bwrap, the interpreter and the page cache
        times: dict[str, list[float]] = {name: [] for name in SUBJECTS}
        for _ in range(runs):
            for name, policy in SUBJECTS.items():
                times[name].append(await _once(root, policy))
    medians = {name: statistics.median(values) * 1000 for name, values in times.items()}
    for name, median in medians.items():
        print(f"{name:>10}: median {median:.1f} ms over {runs} runs")
    print(f"allowlist adds {medians['allowlist'] - medians['off']:.1f} ms per exec")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    asyncio.run(main(parser.parse_args().runs))

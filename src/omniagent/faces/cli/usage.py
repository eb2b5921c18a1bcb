"""`omniagent usage`: each installed agent's plan quota windows as bars, or in one line why it cannot show them.

Thin on purpose: discovery, then one `Runtime.plan_usage` per agent (concurrently), then formatting. Agents whose
wire cannot report plan usage are answered without launching anything. `--json` prints one document instead:
`{"agents": [{"id", "name", "usage": PlanUsage | null, "error": ErrorBody | null}, …]}`.

Exit codes: 0 when at least one agent showed its windows (with `--agent`: that agent did); 1 when none could (not
installed, no plan usage on its wire, an API-key login, not logged in, or the agent failed); 2 for a usage error;
130 when interrupted (Ctrl-C).
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
from dataclasses import dataclass

from omniagent.protocols.sidecar.agents import AgentInstallation, PlanUsage, TerminalLogin, UsageWindow
from omniagent.runtime.errors import AgentError, AuthRequired, NotInstalled, UnsupportedFeature
from omniagent.runtime.runtime import Runtime

EXIT_SHOWN = 0
EXIT_NONE_SHOWN = 1
EXIT_INTERRUPTED = 130
# Width of one quota bar, in cells.
BAR_WIDTH = 30
# Used share (percent) from which a bar turns yellow, then red.
_WARN_AT, _ALERT_AT = 70, 90


@dataclass(frozen=True, slots=True)
class AgentUsage:
    """One agent's answer: its usage, or the error that says why there is none."""

    installation: AgentInstallation
    usage: PlanUsage | None = None
    error: AgentError | None = None


def run_usage(*, agent: str | None, as_json: bool) -> int:
    """Read and print the plan usage; returns the exit code (see the module docstring)."""
    try:
        answers = asyncio.run(_collect(agent))
    except NotInstalled as error:
        print(f"omniagent: {error}", file=sys.stderr)
        return EXIT_NONE_SHOWN
    except KeyboardInterrupt:  # the agents asked so far are closed by the runtime on the way out
        return EXIT_INTERRUPTED
    if as_json:
        sys.stdout.write(json.dumps({"agents": [_as_json(answer) for answer in answers]}, indent=2) + "\n")
    else:
        _print(answers)
    return EXIT_SHOWN if any(answer.usage is not None for answer in answers) else EXIT_NONE_SHOWN


async def _collect(agent: str | None) -> list[AgentUsage]:
    async with Runtime() as runtime:
        found = [await runtime.resolve(agent)] if agent is not None else (await runtime.discover()).agents
        return list(await asyncio.gather(*(_read(runtime, installation) for installation in found)))


async def _read(runtime: Runtime, installation: AgentInstallation) -> AgentUsage:
    try:
        return AgentUsage(installation, usage=await runtime.plan_usage(installation.id))
    except AgentError as error:
        return AgentUsage(installation, error=error)


def _as_json(answer: AgentUsage) -> dict[str, object]:
    return {
        "id": answer.installation.id,
        "name": answer.installation.name,
        "usage": answer.usage.dump() if answer.usage is not None else None,
        "error": answer.error.body().dump() if answer.error is not None else None,
    }


def why_not(error: AgentError) -> str:
    """One line saying why an agent shows no plan usage."""
    if isinstance(error, UnsupportedFeature):
        return "cannot report plan usage" if error.detail == "plan usage" else error.detail
    if isinstance(error, AuthRequired):
        terminal = next((method for method in error.login if isinstance(method, TerminalLogin)), None)
        return f"not logged in (run `{' '.join(terminal.command)}`)" if terminal is not None else "not logged in"
    return str(error)


def resets_in(window: UsageWindow, *, now: float | None = None) -> str:
    """ "resets in 3h 12m" (minutes rounded up, so a fresh answer never shows a minute early), or "" if unknown."""
    if window.resets_at is None:
        return ""
    seconds = window.resets_at.secs_since_epoch - (time.time() if now is None else now)
    if seconds <= 0:
        return "resets now"
    minutes = math.ceil(seconds / 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    if days:
        return f"resets in {days}d {hours}h"
    if hours:
        return f"resets in {hours}h {minutes}m"
    return f"resets in {minutes}m"


def _bar_style(window: UsageWindow) -> str:
    if window.used_percent >= _ALERT_AT:
        return "red"
    return "yellow" if window.used_percent >= _WARN_AT else "green"


def _print(answers: list[AgentUsage]) -> None:
    # rich is imported here so `--json` never pays for it.
    from rich.progress_bar import ProgressBar
    from rich.table import Table
    from rich.text import Text

    from omniagent.faces.pipes import stdout_console

    console = stdout_console(highlight=False)
    if not answers:
        console.print("No agent CLI found (see `omniagent agents`).")
    # Agents with windows first, then one line each for the rest (each group in discovery order).
    for answer in sorted(answers, key=lambda answer: answer.usage is None):
        who = f"{answer.installation.name} ({answer.installation.id})"
        if answer.usage is None:
            assert answer.error is not None
            console.print(Text.assemble((who, "bold"), f": {why_not(answer.error)}"))
            continue
        plan = f" · plan {answer.usage.plan}" if answer.usage.plan else ""
        console.print(Text.assemble((who, "bold"), plan))
        if not answer.usage.windows:
            console.print("  no quota windows reported")
            continue
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True)  # indent + label
        grid.add_column(no_wrap=True)  # bar
        grid.add_column(justify="right", no_wrap=True)  # used
        grid.add_column(no_wrap=True)  # resets in
        for window in answer.usage.windows:
            bar = ProgressBar(
                total=100, completed=window.used_percent, width=BAR_WIDTH, complete_style=_bar_style(window)
            )
            grid.add_row(f"  {window.label}", bar, f"{window.used_percent}% used", resets_in(window))
        console.print(grid)

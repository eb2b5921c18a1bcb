"""`omniagent agents`: a table of the agent CLIs installed and missing on this machine, or `--json` for the report.

Thin on purpose: one `discover()` call, then formatting. Diagnostics (a broken override, a slow login shell) go to
stderr so stdout stays the table or the JSON document.
"""

from __future__ import annotations

import json
import sys

from omniagent.protocols.sidecar.agents import DiscoveryReport, InstallationSource
from omniagent.runtime.discovery import discover

# How the human table names each source.
_SOURCE_LABELS = {
    InstallationSource.ENV_OVERRIDE: "env override",
    InstallationSource.PATH: "PATH",
    InstallationSource.LOGIN_SHELL_PATH: "login shell PATH",
    InstallationSource.VERSION_MANAGER: "version manager",
    InstallationSource.KNOWN_LOCATION: "known location",
    InstallationSource.PINNED: "pinned",
}
# Width used when stdout is not a terminal: wide enough that no path or install hint is wrapped in a pipe or log.
_PIPE_WIDTH = 240


def run_agents(*, as_json: bool) -> int:
    """Discover the agents and print them; returns the exit code (always 0: a missing agent is not an error)."""
    report = discover()
    if as_json:
        sys.stdout.write(json.dumps(report.dump(), indent=2) + "\n")
    else:
        _print_tables(report)
    for diagnostic in report.diagnostics:
        print(f"omniagent: {diagnostic.level.value.lower()}: {diagnostic.message}", file=sys.stderr)
    return 0


def _print_tables(report: DiscoveryReport) -> None:
    # rich is imported here so `--json` never pays for it.
    from rich import box
    from rich.table import Table

    from omniagent.faces.pipes import stdout_console

    console = stdout_console(width=None if sys.stdout.isatty() else _PIPE_WIDTH, highlight=False)
    if report.agents:
        installed = Table(title=f"Installed agents ({len(report.agents)})", title_justify="left", box=box.SIMPLE_HEAD)
        for header in ("id", "name", "executable", "found via"):
            installed.add_column(header, no_wrap=header != "executable")
        for agent in report.agents:
            installed.add_row(agent.id, agent.name, agent.executable_path, _SOURCE_LABELS[agent.source])
        console.print(installed)
    else:
        console.print("No agent CLI found.\n")
    if report.missing:
        missing = Table(title=f"Missing agents ({len(report.missing)})", title_justify="left", box=box.SIMPLE_HEAD)
        for header in ("id", "name", "install with"):
            missing.add_column(header, no_wrap=header != "install with")
        for absent in report.missing:
            missing.add_row(absent.id, absent.name, absent.install_hint)
        console.print(missing)
    console.print(
        "Point omniagent at a CLI elsewhere with OMNIAGENT_<ID>_BIN=/path/to/cli (e.g. OMNIAGENT_CLAUDE_BIN)."
    )

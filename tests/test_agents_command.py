"""`omniagent agents` as a real process: the human table, `--json`, diagnostics on stderr, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from omniagent.runtime.catalog import PROFILES, ConnectionKind
from tests.sidecar_schema import validate

# Every row discovery searches for: all but our own engine, which is always installed (issue "One system" part 3).
SEARCHED = [row for row in PROFILES if row.connection is not ConnectionKind.ENGINE]
ENGINE_LINE = ["omniagent", "omniagent"]


def run_agents(tmp_path: Path, *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    """`omniagent agents` with an empty PATH and an empty HOME: a machine where no agent is installed."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": "", "HOME": str(home), **extra_env}
    return subprocess.run(
        [sys.executable, "-m", "omniagent", "agents", *args], env=env, capture_output=True, text=True, timeout=30
    )


def test_agents_lists_every_catalog_agent_as_missing_with_its_install_hint(tmp_path: Path) -> None:
    """Issue acceptance: with none installed, `omniagent agents` prints every agent as missing with its hint (and
    our engine as installed, issue "One system" part 3). The login shell stays on (SHELL unset → /bin/sh), as on a
    user's machine."""
    out = run_agents(tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Installed agents (1)" in out.stdout
    assert any(line.split()[:2] == ENGINE_LINE and "pinned" in line for line in out.stdout.splitlines())
    assert f"Missing agents ({len(SEARCHED)})" in out.stdout
    lines = out.stdout.splitlines()
    for row in SEARCHED:
        (line,) = [line for line in lines if line.split()[:1] == [row.id]]
        assert row.name in line and row.install_hint in line
    assert "Traceback" not in out.stderr


def test_agents_json_prints_one_discovery_report_with_every_agent_missing(tmp_path: Path) -> None:
    """Issue: `--json` prints the DiscoveryReport (anyagent schema) as one JSON document; exit 0."""
    out = run_agents(tmp_path, "--json", OMNIAGENT_NO_LOGIN_SHELL="1")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    validate("DiscoveryReport", report)
    assert [(a["id"], a["source"]) for a in report["agents"]] == [("omniagent", "Pinned")]
    assert report["diagnostics"] == []
    assert [(m["id"], m["name"], m["install_hint"]) for m in report["missing"]] == [
        (row.id, row.name, row.install_hint) for row in SEARCHED
    ]
    home = str(tmp_path / "home")
    for missing in report["missing"]:
        assert f"{home}/.volta/bin" in missing["searched"] and "/usr/local/bin" in missing["searched"]
    assert out.stderr == ""


def test_agents_shows_an_installed_agent_with_its_path_and_source(tmp_path: Path) -> None:
    """An env override is found first and reported as such."""
    claude = tmp_path / "bin" / "my-claude"
    claude.parent.mkdir()
    claude.write_text("#!/bin/sh\n")
    claude.chmod(0o755)
    out = run_agents(tmp_path, OMNIAGENT_CLAUDE_BIN=str(claude), OMNIAGENT_NO_LOGIN_SHELL="1")
    assert out.returncode == 0, out.stderr
    assert "Installed agents (2)" in out.stdout
    (line,) = [line for line in out.stdout.splitlines() if str(claude) in line]
    assert line.split()[:3] == ["claude", "Claude", "Code"] and line.rstrip().endswith("env override")
    assert f"Missing agents ({len(SEARCHED) - 1})" in out.stdout

    report = json.loads(run_agents(tmp_path, "--json", ANYAGENT_CLAUDE_BIN=str(claude)).stdout)
    validate("DiscoveryReport", report)
    assert report["agents"][1:] == [
        {"id": "claude", "name": "Claude Code", "executable_path": str(claude), "source": "EnvOverride"}
    ]


def test_broken_override_is_a_warning_on_stderr_and_stdout_stays_json(tmp_path: Path) -> None:
    """A Warning diagnostic "{VAR} is set but {path} is not an executable file"; the table and JSON stay
    on stdout, diagnostics also go to stderr."""
    bogus = str(tmp_path / "nope")
    out = run_agents(tmp_path, "--json", OMNIAGENT_CODEX_BIN=bogus, OMNIAGENT_NO_LOGIN_SHELL="1")
    assert out.returncode == 0
    report = json.loads(out.stdout)
    validate("DiscoveryReport", report)
    message = f"OMNIAGENT_CODEX_BIN is set but {bogus} is not an executable file"
    assert report["diagnostics"] == [{"level": "Warning", "message": message}]
    assert out.stderr == f"omniagent: warning: {message}\n"

"""The command line's outer contract: version, usage and exit codes; and the shape of its code."""

import ast
import subprocess
import sys

from omniagent._version import __version__
from tests.test_layers import PACKAGE, _cycle, _module_name, _targets

CLI = PACKAGE / "faces" / "cli"
# Generated from the ACP schema: not written by hand, so not held to the hand-written code's limits.
GENERATED = {PACKAGE / "protocols" / "acp" / "v1.py", PACKAGE / "protocols" / "acp" / "v2.py"}
LONGEST_FUNCTION = 60  # lines, `def` to last line
# The runtime's insides the CLI must not reach into: it drives agents through `Runtime` and its public modules.
RUNTIME_INSIDES = ("omniagent.runtime.turns", "omniagent.runtime.adapters", "omniagent.runtime.discovery")
# `omniagent agents` discovers synchronously: through `Runtime` it would import the whole runtime (~100 ms) for
# one file-system lookup.
REACHES_ALLOWED = {("agents.py", "omniagent.runtime.discovery")}


def test_version_subcommand_prints_the_package_version() -> None:
    """Our choice: `omniagent version` prints the bare version for scripts."""
    out = subprocess.run([sys.executable, "-m", "omniagent", "version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == __version__


def test_no_subcommand_prints_usage_on_stderr_and_exits_2() -> None:
    """No subcommand → usage on stderr, exit 2."""
    out = subprocess.run([sys.executable, "-m", "omniagent"], capture_output=True, text=True)
    assert out.returncode == 2
    assert "usage" in out.stderr
    assert out.stdout == ""


def test_no_function_is_over_60_lines() -> None:
    """Issue 20: no function over 60 lines."""
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in GENERATED:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                if lines > LONGEST_FUNCTION:
                    long.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []


def test_no_import_cycle_among_the_cli_modules() -> None:
    """Issue 20: the CLI's modules import each other in one direction (TYPE_CHECKING imports included)."""
    paths = {_module_name(path): path for path in CLI.rglob("*.py")}
    graph = {name: _targets(path, set(paths)) - {name} for name, path in paths.items()}
    assert _cycle(graph) == []


def test_the_cli_drives_agents_through_the_runtimes_public_api() -> None:
    """Issue 20: no CLI module imports the runtime's turn rules, adapters or discovery."""
    reaches = []
    for path in sorted(CLI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            for module in modules:
                inside = next((m for m in RUNTIME_INSIDES if module == m or module.startswith(f"{m}.")), None)
                if inside is not None and (path.name, inside) not in REACHES_ALLOWED:
                    reaches.append(f"{path.name} imports {module}")
    assert reaches == []

"""The command line's outer contract: version, usage and exit codes."""

import subprocess
import sys

from omniagent._version import __version__


def test_version_subcommand_prints_the_package_version() -> None:
    """Our choice: `omniagent version` prints the bare version for scripts."""
    out = subprocess.run([sys.executable, "-m", "omniagent", "version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == __version__


def test_no_subcommand_prints_usage_on_stderr_and_exits_2() -> None:
    """anyagent §1: no subcommand → usage on stderr, exit 2."""
    out = subprocess.run([sys.executable, "-m", "omniagent"], capture_output=True, text=True)
    assert out.returncode == 2
    assert "usage" in out.stderr
    assert out.stdout == ""

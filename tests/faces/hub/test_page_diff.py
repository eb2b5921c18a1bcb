"""The page's line diff (`faces/hub/web/static/diff.js`, used for every file change it shows), checked in node on
3,000 random changes: the hunks, applied to the old text, give the new one, with their counts, positions and
context right (`diff_check.mjs`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
DIFF = HERE.parents[2] / "src" / "omniagent" / "faces" / "hub" / "web" / "static" / "diff.js"


def test_the_pages_diff_applied_gives_the_new_text() -> None:
    node = shutil.which("node")
    assert node is not None, "node is needed (the agents' npm packages need it too: scripts/install_agents.py)"
    done = subprocess.run(
        [node, str(HERE / "diff_check.mjs"), DIFF.as_uri(), "3000"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok 3000"

"""Debian's Chromium as the tests, the benchmarks and the scripts start it, through Playwright's driver only (no
browser is ever downloaded): where it is and the flags it needs here.

The flags: headless; `--no-sandbox`, since CI runs as root, where Chromium's own sandbox does not start; and no
background networking, component updates, sync or QUIC, whose connections this machine's closed network refuses
(a page's own requests are the tests' to watch).
"""

from __future__ import annotations

import shutil

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def executable() -> str:
    """The system's `chromium`; an AssertionError saying how to get it when it is missing."""
    found = shutil.which("chromium")
    assert found is not None, "Debian's chromium is not installed (.ci/run installs it: apt-get install chromium)"
    return found

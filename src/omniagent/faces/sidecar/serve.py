"""`omniagent serve`, the process: the hello written before asyncio is imported, then the sidecar.

The hello needs only our version and the wire's (`protocols/sidecar`, without its models), and asyncio is most of a
bare Python start (docs/performance.md), so the hello goes out first; `faces/sidecar/connection.py` serves what follows.
`--mock` loads its script (and with it the models) before the hello: a bad script is refused up front, with nothing
on stdout.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from omniagent.serving.sidecar.hello import HELLO
from omniagent.wire.first_request import write_all

if TYPE_CHECKING:
    import logging


def run_sidecar(*, mock: str | None) -> int:
    """Entry point of `omniagent serve`; returns the exit code (0 on EOF; 1 when stdout stopped accepting writes,
    its reader gone included, as with `anyagent serve`, or the mock script is bad; 130 on Ctrl-C)."""
    try:
        return _run(mock)
    except KeyboardInterrupt:
        return 130


def _run(mock: str | None) -> int:
    script = None
    if mock is not None:
        from omniagent.runtime.adapters.mock import MockScriptError, load_script

        try:
            script = load_script(mock)
        except MockScriptError as exc:
            _log().error("%s", exc)
            return 1
    try:
        write_all(sys.stdout.fileno(), HELLO + b"\n")
    except OSError as exc:
        _log().error("stdout is broken (%s); shutting down", type(exc).__name__)
        return 1
    _log()
    from omniagent.faces.sidecar.connection import serve_sidecar

    return serve_sidecar(script)


def _log() -> logging.Logger:
    """The face's logger, logging configured (here, not at import: the hello goes out before logging is imported)."""
    from omniagent.logs import configure, face_logger

    configure("serve")
    return face_logger("serve")

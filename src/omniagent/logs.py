"""Diagnostics: standard `logging` on stderr, one setup per face, turned up with `OMNIAGENT_LOG`.

Every module logs to `logging.getLogger(__name__)` (`omniagent.engine.run.inputs`, `omniagent.wire.process`, …), and
a face's own lines go to the face's logger (`omniagent.rpc`, `omniagent.acp`, `omniagent.serve`). The face that
owns the process calls `configure(face)` once at start, so every line names the process it came from, whichever
module wrote it: `omniagent acp: WARNING omniagent.engine.run.inputs: run failed: …`.

Turn it up (or down) with `OMNIAGENT_LOG=debug|info|warning|error` (default `warning` for the servers).
Nothing is ever written to stdout: stdout carries only the wire.
"""

from __future__ import annotations

import logging
import os
import sys

LEVEL_VARIABLE = "OMNIAGENT_LOG"
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def face_logger(face: str) -> logging.Logger:
    """The logger of one face of omniagent (`rpc`, `acp`, `serve`, `run`, `chat`)."""
    return logging.getLogger(f"omniagent.{face}")


def configure(face: str, *, default: int = logging.WARNING) -> None:
    """Send omniagent's log records to stderr, prefixed with the face's name, at the level `OMNIAGENT_LOG` asks
    for (an unknown value keeps `default`). Safe to call twice: the handler is replaced, not added."""
    wanted = os.environ.get(LEVEL_VARIABLE, "").strip().lower()
    level = _LEVELS.get(wanted, default)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"omniagent {face}: %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("omniagent")
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # Records stop here: a library user's root handlers do not print them a second time.
    root.propagate = False

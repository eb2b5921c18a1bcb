"""`omniagent rpc`, the process: a first `initialize` answered before asyncio is imported, then the face.

The answer needs only the provider catalog (`engine/handshake.py`), and asyncio is most of a bare Python start
(docs/performance.md, `wire/first_request.py`). Every byte read so far then goes to the face
(`faces/rpc/connection.py`), which answers all the rest, a first line this path did not take included.
"""

from __future__ import annotations

import functools
from pathlib import Path

from omniagent.engine import handshake
from omniagent.engine.config import MAX_LINE_BYTES
from omniagent.wire.dialects import LITE
from omniagent.wire.first_request import answer_first_request


def run_rpc(data_dir: Path | None) -> int:
    """Serve the engine on stdin/stdout until stdin closes; returns the exit code (0; 141 when stdout's reader went
    away, 1 when stdout broke otherwise; 130 on Ctrl-C)."""
    try:
        first = functools.partial(handshake.first_reply, data_dir)
        prelude = answer_first_request(LITE, {"initialize": first}, max_bytes=MAX_LINE_BYTES)
        from omniagent.logs import configure

        configure("rpc")
        from omniagent.faces.rpc.connection import serve_rpc

        return serve_rpc(data_dir, prelude)
    except KeyboardInterrupt:
        return 130

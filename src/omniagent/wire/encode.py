"""Encoding one JSON line: the one encoder every line we write goes through (`serve`, `rpc`, `acp`, our peers).

Standard library only and no event loop, so a face can write its first reply before asyncio is imported
(`wire/first_request.py`).
"""

from __future__ import annotations

import json
from typing import Any


def dumps(value: Any) -> bytes:
    """Compact JSON, UTF-8, no trailing newline.

    A string with no UTF-8 form (a lone surrogate, e.g. a file name's undecodable bytes kept as surrogate escapes)
    gets `?` in place of those characters: one odd character must not fail a reply or kill a writer.
    """
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "replace")

"""The `search` tool: find files by glob and/or lines by regex under a workspace directory, bounded, skipping VCS dirs.

The search itself runs in a worker process (search_worker.py, which also holds the glob rules): a regex that
backtracks without end cannot freeze the engine, the worker is killed when `search_timeout` passes or the run is
cancelled, and the tool answers with an error the model can act on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import sys
from collections.abc import Mapping
from typing import Any

from omniagent.engine.tools.args import optional_bool, optional_int, optional_str
from omniagent.engine.tools.context import ToolContext, ToolError, ToolResult, guarded
from omniagent.engine.tools.files.search_worker import Query, glob_regex

log = logging.getLogger(__name__)

__all__ = ["SearchTool", "glob_regex"]

# The worker: `-P` so the working directory never shadows our modules; started in `/` for the same reason.
WORKER_ARGV = (sys.executable, "-P", "-m", "omniagent.engine.tools.files.search_worker")
# Bytes of worker output read at most (the result cap times the line cap, with room for JSON escapes).
WORKER_OUTPUT_LIMIT = 32 * 1024 * 1024


class SearchTool:
    """List files matching a glob, or lines matching a regex, inside the workspace."""

    name = "search"
    description = (
        "Find files in the workspace. `glob` filters by name (`*.py`) or by path when it holds a `/` "
        "(`src/**/*.ts`); `regex` (Python syntax) searches file contents and returns `path:line: text`. "
        "With neither, lists files. `path` limits the search to a directory. .git is skipped; results are capped."
    )
    input_schema: Mapping[str, object] = {
        "type": "object",
        "properties": {
            "glob": {"type": "string", "description": "File name or path pattern."},
            "regex": {"type": "string", "description": "Regular expression to search for in file contents."},
            "path": {"type": "string", "description": "Directory to search, relative to the workspace root."},
            "ignore_case": {"type": "boolean", "description": "Match the regex case-insensitively.", "default": False},
            "max_results": {"type": "integer", "minimum": 1, "description": "Most results to return."},
        },
        "additionalProperties": False,
    }

    async def run(self, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        """Search; a bad pattern, a path outside the workspace or a search past the deadline give an error result."""

        async def body() -> ToolResult:
            query = _parse(args, ctx)
            answer = await _run_worker(query, ctx.limits.search_timeout)
            if "error" in answer:
                raise ToolError(str(answer["error"]))
            results, capped = [str(r) for r in answer["results"]], bool(answer["capped"])
            noun = "matching lines" if query.regex else "files"
            if not results:
                return ToolResult(output=f"no {noun} found")
            if capped:
                results.append(f"[stopped at {query.max_results} {noun}; narrow the search to see more]")
            return ToolResult(output="\n".join(results))

        return await guarded(ctx.root, body)


def _parse(args: Mapping[str, object], ctx: ToolContext) -> Query:
    cap = ctx.limits.search_max_results
    return Query(
        root=str(ctx.root),
        workdir=str(ctx.workdir) if ctx.workdir is not None else None,
        path=optional_str(args, "path") or ".",
        glob=optional_str(args, "glob"),
        regex=optional_str(args, "regex"),
        ignore_case=optional_bool(args, "ignore_case", default=False),
        max_results=min(optional_int(args, "max_results", minimum=1) or cap, cap),
        max_line_chars=ctx.limits.max_line_chars,
        max_file_bytes=ctx.limits.search_max_file_bytes,
    )


async def _run_worker(query: Query, seconds: float) -> dict[str, Any]:
    """The worker's answer; killed (and an error raised) after `seconds` or when the caller is cancelled."""
    proc = await asyncio.create_subprocess_exec(
        *WORKER_ARGV,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd="/",
        limit=WORKER_OUTPUT_LIMIT,
    )
    try:
        async with asyncio.timeout(seconds):
            out, err = await proc.communicate(json.dumps(dataclasses.asdict(query)).encode())
    except TimeoutError:
        raise ToolError(
            f"the search did not finish within {seconds:g} s and was stopped; a regex with nested repetition "
            "such as (a+)+$ can take forever on some lines: simplify the pattern or narrow the path"
        ) from None
    finally:
        if proc.returncode is None:
            proc.kill()  # a deadline or a cancelled run: the worker must not spin on
            await proc.wait()
    if proc.returncode != 0:
        log.warning("the search worker failed: %s", err.decode(errors="replace")[-2000:])
        raise ToolError("the search failed inside its worker process")
    value = json.loads(out)
    assert isinstance(value, dict)
    return value

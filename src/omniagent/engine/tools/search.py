"""The `search` tool: find files by glob and/or lines by regex under a workspace directory, bounded, skipping VCS dirs.

Glob rules (our choice, as fd and ripgrep's `-g` do): a pattern without `/` matches file *names* at any depth
(`*.py`); a pattern with `/` matches the path relative to the searched directory (`src/**/test_*.py`). `*` and `?`
stay inside one path segment, `**` crosses segments, `[abc]` is a class and `{a,b}` an alternative.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from omniagent.engine.tools.args import optional_bool, optional_int, optional_str
from omniagent.engine.tools.context import ToolContext, ToolError, ToolLimits, ToolResult, guarded
from omniagent.engine.tools.workspace import display_path, resolve_in_workspace

__all__ = ["SearchTool", "glob_regex"]

# Directories never entered: version-control internals are noise to a model and can be huge.
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})
# Bytes sniffed for a NUL byte to skip binary files in content search.
BINARY_SNIFF_BYTES = 8192


@dataclass(frozen=True, slots=True)
class _Query:
    base: Path
    root: Path
    glob: re.Pattern[str] | None
    glob_on_name: bool
    regex: re.Pattern[str] | None
    max_results: int
    limits: ToolLimits


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
        """Search; a bad pattern or a path outside the workspace gives an error result."""

        async def body() -> ToolResult:
            query = _parse(args, ctx)
            results, capped = await asyncio.to_thread(_collect, query)
            noun = "matching lines" if query.regex else "files"
            if not results:
                return ToolResult(output=f"no {noun} found")
            if capped:
                results.append(f"[stopped at {query.max_results} {noun}; narrow the search to see more]")
            return ToolResult(output="\n".join(results))

        return await guarded(ctx.root, body)


def _parse(args: Mapping[str, object], ctx: ToolContext) -> _Query:
    glob = optional_str(args, "glob")
    regex = optional_str(args, "regex")
    ignore_case = optional_bool(args, "ignore_case", default=False)
    cap = ctx.limits.search_max_results
    max_results = min(optional_int(args, "max_results", minimum=1) or cap, cap)
    base = resolve_in_workspace(ctx.root, optional_str(args, "path") or ".")
    if not base.is_dir():
        raise ToolError(f"{display_path(ctx.root, base)} is not a directory")
    try:
        compiled = re.compile(regex, re.IGNORECASE if ignore_case else 0) if regex else None
    except re.error as exc:
        raise ToolError(f"the regex is invalid: {exc}") from exc
    return _Query(
        base=base,
        root=ctx.root,
        glob=glob_regex(glob) if glob else None,
        glob_on_name=glob is not None and "/" not in glob,
        regex=compiled,
        max_results=max_results,
        limits=ctx.limits,
    )


def _collect(query: _Query) -> tuple[list[str], bool]:
    results: list[str] = []
    for path in _files(query):
        if query.regex is None:
            results.append(display_path(query.root, path))
        else:
            results.extend(_matching_lines(path, query.regex, query, query.max_results + 1 - len(results)))
        if len(results) > query.max_results:
            return results[: query.max_results], True
    return results, False


def _files(query: _Query) -> Iterator[Path]:
    # os.walk does not descend into symlinked directories, so the walk itself never leaves the workspace.
    for dirpath, dirnames, filenames in os.walk(query.base):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath, name)
            if query.glob is not None:
                subject = name if query.glob_on_name else path.relative_to(query.base).as_posix()
                if not query.glob.fullmatch(subject):
                    continue
            yield path


def _matching_lines(path: Path, regex: re.Pattern[str], query: _Query, budget: int) -> list[str]:
    # A symlinked file may point outside the workspace: its content must not be read.
    if path.is_symlink() and not path.resolve().is_relative_to(query.root):
        return []
    try:
        if not path.is_file() or path.stat().st_size > query.limits.search_max_file_bytes:
            return []
        with path.open("rb") as handle:
            if b"\x00" in handle.read(BINARY_SNIFF_BYTES):
                return []
            handle.seek(0)
            shown = display_path(query.root, path)
            found: list[str] = []
            for number, raw in enumerate(handle, start=1):
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if regex.search(line):
                    found.append(f"{shown}:{number}: {line[: query.limits.max_line_chars]}")
                    if len(found) >= budget:
                        break
            return found
    except OSError:
        return []  # unreadable files (permissions, vanished mid-walk) are skipped, as grep -s does


def glob_regex(pattern: str) -> re.Pattern[str]:
    """The compiled regex (use `fullmatch`) for a glob pattern, per this module's glob rules."""
    return re.compile(_translate(pattern), re.DOTALL)


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            negated = body.startswith("!")
            body = re.escape(body[1:] if negated else body).replace("\\-", "-")
            out.append(f"[{'^' if negated else ''}{body}]")
            i = end + 1
        elif pattern[i] == "{" and (end := pattern.find("}", i)) != -1:
            alternatives = pattern[i + 1 : end].split(",")
            out.append("(?:" + "|".join(_translate(alt) for alt in alternatives) + ")")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)

"""The `search` worker: walks the workspace and matches files, in a process of its own.

Run as `python -P -m omniagent.engine.tools.files.search_worker` with one JSON query on stdin; it writes one JSON answer
on stdout: `{"results": [...], "capped": bool}` or `{"error": "<sentence for the model>"}`. It is a separate
process because Python's `re` holds the interpreter lock for the whole of one match: a backtracking pattern such
as `(a+)+$` on a long line would freeze every session of the engine. A process can be killed on a deadline or a
cancel (search.py does both); a thread cannot.

The walk never leaves the workspace: the base directory is opened through beneath.py, directories are walked by
fd (`os.fwalk`, which does not enter symlinked directories and checks each directory it opens is the one it
listed), and a file is opened with `O_NOFOLLOW` in its directory's fd; a symlinked file is opened through
beneath.py from the root, so only links that stay inside are read.

Glob rules (our choice, as fd and ripgrep's `-g` do): a pattern without `/` matches file *names* at any depth
(`*.py`); a pattern with `/` matches the path relative to the searched directory (`src/**/test_*.py`). `*` and `?`
stay inside one path segment, `**` crosses segments, `[abc]` is a class and `{a,b}` an alternative.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omniagent.engine.tools.context import ToolError
from omniagent.engine.tools.files.beneath import open_beneath

__all__ = ["glob_regex", "main", "search"]

# Directories never entered: version-control internals are noise to a model and can be huge.
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})
# Bytes sniffed for a NUL byte to skip binary files in content search.
BINARY_SNIFF_BYTES = 8192
# Added to the worker's nice value.
WORKER_NICENESS = 10
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


@dataclass(frozen=True, slots=True)
class Query:
    """One search, as the tool sends it to the worker (JSON object with these fields)."""

    root: str
    workdir: str | None  # another name of `root` (beneath.py's `alias`)
    path: str
    glob: str | None
    regex: str | None
    ignore_case: bool
    max_results: int
    max_line_chars: int
    max_file_bytes: int

    @property
    def alias(self) -> Path | None:
        return Path(self.workdir) if self.workdir is not None else None

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Query:
        return cls(**{name: value[name] for name in cls.__dataclass_fields__})


def search(query: Query) -> tuple[list[str], bool]:
    """The matching paths (no regex) or `path:line: text` lines, and whether the cap stopped the search.

    Raises:
        ToolError: a bad pattern, or a base path that is outside the workspace or not a directory.
        OSError: the base directory cannot be opened.
    """
    try:
        regex = re.compile(query.regex, re.IGNORECASE if query.ignore_case else 0) if query.regex else None
    except (re.error, OverflowError, RecursionError) as exc:
        raise ToolError(f"the regex is invalid: {exc}") from exc
    glob = glob_regex(query.glob) if query.glob else None
    root = Path(query.root)
    base = open_beneath(root, query.path, alias=query.alias)
    try:
        if not base.is_dir:
            raise ToolError(f"{base.rel} is not a directory")
        results: list[str] = []
        for shown, from_base, name, dir_fd in _files(base.fd, base.rel):
            if glob is not None and not glob.fullmatch(name if "/" not in (query.glob or "") else from_base):
                continue
            if regex is None:
                results.append(shown)
            else:
                budget = query.max_results + 1 - len(results)
                results.extend(_matching_lines(root, shown, name, dir_fd, regex, query, budget))
            if len(results) > query.max_results:
                return results[: query.max_results], True
        return results, False
    finally:
        base.close()


def _files(base_fd: int, base_rel: str) -> Iterator[tuple[str, str, str, int]]:
    """(workspace path, path from the base, name, its directory's fd) of every non-directory, sorted."""
    prefix = "" if base_rel == "." else f"{base_rel}/"
    for dirpath, dirnames, filenames, dir_fd in os.fwalk(".", dir_fd=base_fd):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        inner = dirpath[2:] if dirpath.startswith("./") else ""
        for name in sorted(filenames):
            from_base = f"{inner}/{name}" if inner else name
            yield _printable(prefix + from_base), from_base, name, dir_fd


def _printable(path: str) -> str:
    # A name that is not UTF-8 arrives with surrogate escapes, which no wire can carry.
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _matching_lines(
    root: Path, shown: str, name: str, dir_fd: int, regex: re.Pattern[str], query: Query, budget: int
) -> list[str]:
    try:
        fd = _open_file(root, shown, name, dir_fd, query.alias)
    except (OSError, ToolError):
        return []  # unreadable, vanished mid-walk, or a link leading outside: skipped, as grep -s does
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > query.max_file_bytes:
            return []
        os.set_blocking(fd, True)
        with os.fdopen(os.dup(fd), "rb") as handle:
            if b"\x00" in handle.read(BINARY_SNIFF_BYTES):
                return []
            handle.seek(0)
            found: list[str] = []
            for number, raw in enumerate(handle, start=1):
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if regex.search(line):
                    found.append(f"{shown}:{number}: {line[: query.max_line_chars]}")
                    if len(found) >= budget:
                        break
            return found
    except OSError:
        return []
    finally:
        os.close(fd)


def _open_file(root: Path, shown: str, name: str, dir_fd: int, alias: Path | None) -> int:
    try:
        return os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
    opened = open_beneath(root, shown, alias=alias)  # a symlink: followed only while it stays inside
    return opened.fd


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


def main() -> int:
    """Worker entry: one query from stdin, one answer to stdout."""
    # Below the engine's priority: a pattern that spins until its deadline must not starve the engine's answers.
    os.nice(WORKER_NICENESS)
    query = Query.from_json(json.loads(sys.stdin.buffer.read()))
    try:
        results, capped = search(query)
        answer: dict[str, Any] = {"results": results, "capped": capped}
    except ToolError as exc:
        answer = {"error": str(exc)}
    except FileNotFoundError:
        answer = {"error": f"{query.path} does not exist"}
    except OSError as exc:
        answer = {"error": f"the search failed: {(exc.strerror or type(exc).__name__).lower()}"}
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Project instructions: the `AGENTS.md` files (a directory's `CLAUDE.md` where it has no `AGENTS.md`) that join the
system prompt of every request of a run.

Which files, in the order they are put in (most general first, so the nearest file has the last word):

1. the user's own: `AGENTS.md` in the engine's config dir (beside providers.json);
2. the repository root's, then each directory below it, down to the workspace root. The repository root is the
   nearest directory at or above the workspace that holds `.git`; outside a repository only the workspace root's.

Limits: a file longer than `FILE_LIMIT` bytes is cut at the last line end before it, with a note saying so. Then the
files are taken nearest first (the workspace's, its parents', the user's) while they fit in `TOTAL_LIMIT` bytes
altogether, so a long general file never crowds out the workspace's own; a file that does not fit in what is left is
left out, and the prompt names it. A missing, empty or unreadable file is skipped; bytes that are not UTF-8 are
replaced.

What it is not: the session's own system prompt (fixed at creation, placeholders resolved:
`engine/session/lifecycle.py`). The section here is appended to it, or to the default one, when a run starts
(`executor.py`), so an edited file counts from the next turn on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# The file names looked for in each directory, in order of preference.
FILE_NAMES = ("AGENTS.md", "CLAUDE.md")
# Bytes one file may give.
FILE_LIMIT = 32 * 1024
# Bytes all the files together may give.
TOTAL_LIMIT = 64 * 1024
HEADING = (
    "# Project instructions\n\n"
    "The files below hold instructions from the user and the project, from the most general to the most specific; "
    "where they disagree, the later one wins."
)


@dataclass(frozen=True, slots=True)
class ProjectInstructions:
    """Reads the instruction files of a workspace. `user_dir` holds the user's own `AGENTS.md` (None: none)."""

    user_dir: Path | None = None
    file_limit: int = FILE_LIMIT
    total_limit: int = TOTAL_LIMIT

    def files(self, root: str) -> list[Path]:
        """The files that exist for the workspace `root`, most general first."""
        found: list[Path] = []
        if self.user_dir is not None:
            user = self.user_dir / FILE_NAMES[0]
            if user.is_file():
                found.append(user)
        for directory in _chain(Path(root)):
            chosen = next((directory / name for name in FILE_NAMES if (directory / name).is_file()), None)
            if chosen is not None and all(not _same(chosen, seen) for seen in found):
                found.append(chosen)
        return found

    def section(self, root: str) -> str:
        """The system prompt section for the workspace `root`: "" when there is no file to put in. Blocking I/O."""
        files = self.files(root)
        budget = self.total_limit
        texts: dict[Path, str] = {}
        left_out: list[Path] = []
        for path in reversed(files):  # nearest first: it has the first claim on the room
            text, used = _read(path, self.file_limit)
            if not text:
                continue
            if used > budget:
                left_out.append(path)
                continue
            texts[path] = text
            budget -= used
        if not texts:
            return ""
        parts = [HEADING, *(f"## {path}\n\n{texts[path]}" for path in files if path in texts)]
        if left_out:
            parts.append("Left out for want of room: " + ", ".join(str(p) for p in reversed(left_out)) + ".")
        return "\n\n".join(parts)


def compose(system_prompt: str, section: str) -> str:
    """The system prompt with the instructions section after it (unchanged when there is none)."""
    return f"{system_prompt}\n\n{section}" if section else system_prompt


def _chain(root: Path) -> list[Path]:
    """The repository root down to `root` (only `root` outside a repository)."""
    try:
        workspace = root.resolve()
    except OSError:
        return []
    upward = [workspace, *workspace.parents]
    for depth, directory in enumerate(upward):
        if (directory / ".git").exists():
            return list(reversed(upward[: depth + 1]))
    return [workspace]


def _read(path: Path, allowed: int) -> tuple[str, int]:
    """At most `allowed` (> 0) bytes of `path` as text (cut at a line end when it can be, with a note), and the
    bytes used; ("", 0) for an empty or unreadable file."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            data = handle.read(allowed + 1)
    except OSError:
        return "", 0
    if not data.strip():
        return "", 0
    if len(data) <= allowed:
        return data.decode("utf-8", errors="replace").strip(), len(data)
    kept = data[:allowed]
    end = kept.rfind(b"\n")
    kept = kept[: end + 1] if end > 0 else kept  # a newline is never inside a UTF-8 sequence
    note = f"[{path.name} cut here: the file is {size} bytes; only its first {len(kept)} are included]"
    return f"{kept.decode('utf-8', errors='replace').rstrip()}\n\n{note}", len(kept)


def _same(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False

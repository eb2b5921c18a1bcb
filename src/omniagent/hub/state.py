"""What the hub keeps on disk, in its own folder of the data dir (mode 0700): the bearer token (0600) and the index of
its sessions, one file per session (`sessions/<id>.json`, 0600), each written whole and renamed into place so a crash
never leaves half a file.

Several processes may share one folder (a network hub and any number of `omniagent acp --agent` processes, each with
its own in-process hub), so nothing here is one file that every process rewrites:
- a session id is claimed by creating its file exclusively (`O_EXCL`): `s<n>`, the next n free in the folder;
- each session's entry is written only by the process that holds the session (`sessions/<id>.lock`, an advisory
  `flock` taken when the id is claimed or the session resumed, released when it ends, or by the kernel when the
  process dies): a second process cannot resume a session that is live in another.
An index of the single-file form (`sessions.json`, before one file per session) is still read, never written: its
sessions are listed and resumable, and a session resumed from it is written to its own file from then on.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
from contextlib import suppress
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from omniagent.errors import OmniagentError
from omniagent.files import write_whole

TOKEN_FILE = "token"
ADDRESS_FILE = "address"  # where a running `omniagent hub` listens (its base URL), for `omniagent hub open`
SESSIONS_DIR = "sessions"
LEGACY_INDEX_FILE = "sessions.json"
# The ids the hub claims: anything else (a path, a name from the wire) is no session of the index.
_SESSION_ID = re.compile(r"s[0-9]{1,18}")


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """A session as the index keeps it: enough to list it after the hub restarted, and to resume it."""

    id: str
    agent: str
    directory: str
    created_at: float
    title: str | None = None
    resume_token: str | None = None
    ended: bool = False


class SessionHeld(OmniagentError):
    """Another process holds this session (it is live there)."""


class HubState:
    """The hub's folder: `token`, and `sessions/` (an entry and a lock per session)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._locks: dict[str, int] = {}  # session id → the descriptor holding its lock

    @property
    def _sessions(self) -> Path:
        return self.folder / SESSIONS_DIR

    def _ensure_sessions(self) -> None:
        _ensure(self.folder)
        _ensure(self._sessions)

    # --- the token -------------------------------------------------------------------------------------------------

    def token(self) -> str:
        """The bearer token, made on first use."""
        path = self.folder / TOKEN_FILE
        try:
            token = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            token = ""
        return token or self.rotate()

    def rotate(self) -> str:
        """Replace the token with a new one (every client must then use the new one); returns it."""
        token = secrets.token_urlsafe(32)
        _ensure(self.folder)
        write_whole(self.folder / TOKEN_FILE, token + "\n")
        return token

    # --- where the hub listens -------------------------------------------------------------------------------------

    def write_address(self, url: str) -> None:
        """Say where the hub listens (its base URL), for the commands that reach it from this machine."""
        self.write_file(ADDRESS_FILE, url + "\n")

    def write_file(self, name: str, text: str) -> None:
        """Write a file of the hub's own in its folder (0600, whole, renamed into place)."""
        _ensure(self.folder)
        write_whole(self.folder / name, text)

    def address(self) -> str | None:
        """The base URL the last hub started on this folder said, if it is still there."""
        try:
            return (self.folder / ADDRESS_FILE).read_text(encoding="utf-8").strip() or None
        except OSError:
            return None

    def forget_address(self, url: str) -> None:
        """The hub stops: remove its address, unless a later hub on this folder wrote its own since."""
        if self.address() == url:
            with suppress(OSError):
                (self.folder / ADDRESS_FILE).unlink()

    # --- the index -------------------------------------------------------------------------------------------------

    def read_index(self) -> list[IndexEntry]:
        """Every session the index holds, by id number; an unreadable entry reads as absent (the index is a
        convenience, not a store), and so does an id claimed whose entry is not written yet."""
        entries = {entry.id: entry for entry in self._legacy()}
        with suppress(OSError):
            for path in self._sessions.glob("*.json"):
                entry = _entry(path)
                if entry is not None and entry.id == path.stem:
                    entries[entry.id] = entry
        return sorted(entries.values(), key=lambda entry: _number(entry.id))

    def read_entry(self, session_id: str) -> IndexEntry | None:
        """The index's entry for `session_id` as it is on disk now (another process may have written it since the
        last read), or None."""
        if not _SESSION_ID.fullmatch(session_id):
            return None
        found = _entry(self._sessions / f"{session_id}.json")
        if found is None:
            found = next((entry for entry in self._legacy() if entry.id == session_id), None)
        return found if found is not None and found.id == session_id else None

    def write_entry(self, entry: IndexEntry) -> None:
        """Write one session's entry (whole, then renamed into place)."""
        if not _SESSION_ID.fullmatch(entry.id):
            raise ValueError(f"not an index session id: {entry.id!r}")
        self._ensure_sessions()
        write_whole(self._sessions / f"{entry.id}.json", json.dumps(asdict(entry), indent=1))

    def write_index(self, entries: list[IndexEntry]) -> None:
        """Write each entry's file (the sessions not named are left as they are)."""
        for entry in entries:
            self.write_entry(entry)

    # --- claiming and holding sessions -----------------------------------------------------------------------------

    def claim(self) -> str:
        """A new session id, `s<n>` with the next n free in the folder, claimed against every other process sharing
        it (its entry file is created exclusively) and held by this one. Raises: OSError."""
        self._ensure_sessions()
        n = 1 + max((_number(entry.id) for entry in self._legacy()), default=0)
        with suppress(OSError):
            n = max([n, *(1 + _number(path.stem) for path in self._sessions.glob("*.json"))])
        while True:
            session_id = f"s{n}"
            try:
                os.close(os.open(self._sessions / f"{session_id}.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except FileExistsError:
                n += 1
                continue
            self.hold(session_id)
            return session_id

    def hold(self, session_id: str) -> None:
        """Hold `session_id` for this process while it is live here (idempotent). Raises: `SessionHeld` (another
        process, or another holder in this one, has it), OSError."""
        if session_id in self._locks:
            return
        if not _SESSION_ID.fullmatch(session_id):
            raise ValueError(f"not an index session id: {session_id!r}")
        self._ensure_sessions()
        fd = os.open(self._sessions / f"{session_id}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionHeld(session_id) from None
        except BaseException:
            os.close(fd)
            raise
        self._locks[session_id] = fd

    def release(self, session_id: str, *, forget: bool = False) -> None:
        """Let go of a session held here; `forget`: also remove its entry (a claimed id whose session never
        opened). Lock files stay: removing one another process has open would let two processes hold it."""
        if forget:
            with suppress(FileNotFoundError):
                os.unlink(self._sessions / f"{session_id}.json")
        fd = self._locks.pop(session_id, None)
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the lock

    def release_all(self) -> None:
        for session_id in list(self._locks):
            self.release(session_id)

    def _legacy(self) -> list[IndexEntry]:
        """The entries of the single-file index of earlier versions, if there is one."""
        try:
            rows = json.loads((self.folder / LEGACY_INDEX_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        if not isinstance(rows, list):
            return []
        return [entry for row in rows if (entry := _from_row(row)) is not None]


def _entry(path: Path) -> IndexEntry | None:
    try:
        return _from_row(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None


_FIELDS = frozenset(f.name for f in fields(IndexEntry))


def _from_row(row: Any) -> IndexEntry | None:
    if not isinstance(row, dict):
        return None
    try:
        # Fields a later version adds are left out, not a reason to lose the entry.
        entry = IndexEntry(**{key: value for key, value in row.items() if key in _FIELDS})
    except TypeError:
        return None
    return entry if isinstance(entry.id, str) and _SESSION_ID.fullmatch(entry.id) else None


def _number(session_id: str) -> int:
    digits = session_id[1:]
    return int(digits) if session_id.startswith("s") and digits.isdigit() else 0


def _ensure(folder: Path) -> None:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)

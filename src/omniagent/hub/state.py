"""What the hub keeps on disk, in its own folder of the data dir (mode 0700): the bearer token (0600) and the index of
its sessions (0600), written whole and renamed into place so a crash never leaves half a file."""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from contextlib import suppress
from dataclasses import asdict, dataclass
from pathlib import Path

TOKEN_FILE = "token"
INDEX_FILE = "sessions.json"


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


class HubState:
    """The hub's folder: `token` and `sessions.json`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _ensure(self) -> None:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.folder, 0o700)

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
        self._write(TOKEN_FILE, token + "\n")
        return token

    def read_index(self) -> list[IndexEntry]:
        """The sessions the index holds; an unreadable index reads as empty (it is a convenience, not a store)."""
        try:
            rows = json.loads((self.folder / INDEX_FILE).read_text(encoding="utf-8"))
            return [IndexEntry(**row) for row in rows]
        except (OSError, ValueError, TypeError):
            return []

    def write_index(self, entries: list[IndexEntry]) -> None:
        self._write(INDEX_FILE, json.dumps([asdict(entry) for entry in entries], indent=1))

    def _write(self, name: str, text: str) -> None:
        self._ensure()
        fd, temp = tempfile.mkstemp(dir=self.folder, prefix=f".{name}.")  # mkstemp makes it 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(text)
            os.replace(temp, self.folder / name)
        except BaseException:
            with suppress(FileNotFoundError):
                os.unlink(temp)
            raise

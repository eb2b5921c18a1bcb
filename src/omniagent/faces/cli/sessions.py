"""The sessions `omniagent chat` can resume, and `omniagent sessions`, which lists them (or, with `--hub URL`, the
sessions a hub owns, through its `/sidecar` wire: `remote.py`).

`chat` records each session it opens once the agent has given it a resume token: which agent, which directory,
the token, the title, when it was last used. `chat --resume` takes the newest record for the directory. The
records live in one JSON file in the user's state dir (`$OMNIAGENT_STATE_DIR` moves it), written whole and
atomically, mode 0600 (titles are drawn from the conversation).
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from omniagent.files import write_whole

STATE_DIR_ENV = "OMNIAGENT_STATE_DIR"
# Older records are dropped past this many: the list is for picking up recent work, not an archive.
MAX_RECORDS = 200


@dataclass(frozen=True, slots=True)
class SessionRecord:
    agent: str
    directory: str
    resume_token: str
    title: str | None
    updated: float  # seconds since the epoch


def state_dir() -> Path:
    """Where `chat` keeps its records and line history."""
    override = os.environ.get(STATE_DIR_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_state_dir("omniagent"))


def _records_file() -> Path:
    return state_dir() / "chat-sessions.json"


def load_records() -> list[SessionRecord]:
    """Every record, newest first; an unreadable file reads as none (it is rewritten on the next save)."""
    try:
        raw = json.loads(_records_file().read_text(encoding="utf-8"))
        records = [SessionRecord(**item) for item in raw["sessions"]]
    except (OSError, ValueError, TypeError, KeyError):
        return []
    return sorted(records, key=lambda record: record.updated, reverse=True)


def remember(agent: str, directory: str, resume_token: str, title: str | None) -> None:
    """Add or refresh the record of one session (keyed by agent and token)."""
    kept = [r for r in load_records() if (r.agent, r.resume_token) != (agent, resume_token)]
    fresh = SessionRecord(agent, directory, resume_token, title, time.time())
    _save([fresh, *kept][:MAX_RECORDS])


def latest(directory: str, agent: str | None = None) -> SessionRecord | None:
    """The newest record for `directory` (and `agent`, when given)."""
    return next(
        (r for r in load_records() if r.directory == directory and (agent is None or r.agent == agent)),
        None,
    )


def _save(records: list[SessionRecord]) -> None:
    path = _records_file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    body = json.dumps({"sessions": [asdict(record) for record in records]}, indent=1)
    write_whole(path, body)


def run_sessions(*, every_directory: bool, as_json: bool, hub: str | None = None, token: str | None = None) -> int:
    """`omniagent sessions`: the resumable chat sessions of this directory (or all), newest first; with `hub`, that
    hub's sessions (exit 1 when it cannot be reached)."""
    if hub is not None:
        return _hub_sessions(hub, token, as_json=as_json)
    here = os.getcwd() if not every_directory else None
    records = [r for r in load_records() if here is None or r.directory == here]
    if as_json:
        print(json.dumps([asdict(record) for record in records]))
        return 0
    if not records:
        where = "anywhere" if here is None else "in this directory"
        print(f"no chat sessions to resume {where} (`omniagent chat` starts one)", file=sys.stderr)
        return 0
    from rich.table import Table

    from omniagent.faces.pipes import stdout_console

    table = Table(box=None, pad_edge=False)
    for column in ("agent", "last used", "title", *(("directory",) if here is None else ())):
        table.add_column(column, style="bold" if column == "agent" else "")
    for record in records:
        used = time.strftime("%Y-%m-%d %H:%M", time.localtime(record.updated))
        row = [record.agent, used, record.title or "(untitled)"]
        table.add_row(*row, *((record.directory,) if here is None else ()))
    stdout_console(highlight=False).print(table)
    print("resume the newest with `omniagent chat --resume` (add --agent ID for another agent's)", file=sys.stderr)
    return 0


def _hub_sessions(url: str, token: str | None, *, as_json: bool) -> int:
    import asyncio

    from omniagent.faces.cli.remote import HubLink, split_url
    from omniagent.serving.hub_token import hub_token

    async def listing() -> Any:
        async with HubLink.connect(url, hub_token(token)) as link:
            return await link.sessions()

    try:
        split_url(url)
        sessions = asyncio.run(listing()).sessions
    except ValueError as error:
        print(f"omniagent sessions: error: {error}", file=sys.stderr)
        return 2
    except ConnectionError as error:
        print(f"omniagent sessions: {error}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps([row.dump() for row in sessions]))
        return 0
    if not sessions:
        print("the hub has no sessions (`omniagent chat --attach URL --agent ID` opens one)", file=sys.stderr)
        return 0
    from rich.table import Table

    from omniagent.faces.pipes import stdout_console

    table = Table(box=None, pad_edge=False)
    for column in ("id", "agent", "activity", "clients", "title", "directory"):
        table.add_column(column, style="bold" if column == "id" else "")
    for row in sessions:
        clients = ", ".join(f"{client.name} ({client.role.value})" for client in row.clients) or "-"
        table.add_row(row.id, row.agent, row.activity, clients, row.title or "(untitled)", row.directory)
    stdout_console(highlight=False).print(table)
    print(f"attach with `omniagent chat --attach {url.rstrip('/')}/ID`", file=sys.stderr)
    return 0

"""The store's migrations, one folder per dialect (`sqlite/`, `postgres/`): the same numbered steps with the same
meaning in each, spelled in the dialect's SQL. A store records the last step it applied and applies the newer ones
in order when it opens."""

from __future__ import annotations

from importlib import resources

__all__ = ["migrations"]


def migrations(dialect: str) -> list[tuple[int, str]]:
    """(version, script) of every migration of a dialect (`sqlite`, `postgres`), oldest first."""
    folder = resources.files(__name__) / dialect
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".sql")), key=lambda f: f.name)
    return [(int(f.name.split("_", 1)[0]), f.read_text(encoding="utf-8")) for f in files]

"""API keys: a 0600 JSON file under the caller's data dir, plus keys from the environment.

Keys leave this module only inside a `Secret`, whose repr and str are redacted; `Secret.reveal()` is called only
where the key goes into an HTTP header (the provider constructors, via `routes.open_route`).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from omniagent.errors import OmniagentError

CREDENTIALS_FILE = "credentials.json"  # name of the key file inside the data dir
FILE_MODE = 0o600  # owner read/write only: the file holds secrets
DIR_MODE = 0o700  # the data dir is created private too


class Secret:
    """An API key that never shows itself in a repr, a str, a log line or an error."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The key itself, for an HTTP header and nothing else."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


class CredentialError(OmniagentError):
    """The credential file cannot be read or written. The message names no key and no path."""


class CredentialStore:
    """Stored API keys by provider id, in `<data_dir>/credentials.json` (mode 0600, written atomically)."""

    def __init__(self, data_dir: Path) -> None:
        self._path = data_dir / CREDENTIALS_FILE

    def __repr__(self) -> str:
        return "CredentialStore()"

    def api_key(self, provider_id: str) -> Secret | None:
        """The stored key of `provider_id`, if any.

        Raises:
            CredentialError: the file exists but is a symlink or not a JSON object of strings.
        """
        value = self._read().get(provider_id)
        return Secret(value) if value else None

    def providers(self) -> list[str]:
        """Ids of the providers that have a stored key (never the keys), sorted."""
        return sorted(self._read())

    def set_api_key(self, provider_id: str, api_key: str) -> None:
        """Store (or replace) the key of `provider_id`.

        Raises:
            CredentialError: the file cannot be read or written.
        """
        keys = self._read()
        keys[provider_id] = api_key
        self._write(keys)

    def remove(self, provider_id: str) -> bool:
        """Forget the stored key of `provider_id`; returns whether there was one."""
        keys = self._read()
        if keys.pop(provider_id, None) is None:
            return False
        self._write(keys)
        return True

    def _read(self) -> dict[str, str]:
        try:
            if self._path.is_symlink():
                raise CredentialError("The credential file is a symlink; refusing to read it.")
            text = self._path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise CredentialError("The credential file cannot be read.") from exc
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise CredentialError("The credential file is not valid JSON.") from exc
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise CredentialError("The credential file must map provider ids to key strings.")
        return value

    def _write(self, keys: dict[str, str]) -> None:
        temporary = self._path.with_name(self._path.name + ".tmp")
        try:
            self._path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            # Create with 0600 from the first byte: a chmod after writing would leave a readable window.
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, FILE_MODE)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(keys, handle, indent=2, sort_keys=True)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, FILE_MODE)  # O_CREAT honours the umask only for new files; enforce it
            os.replace(temporary, self._path)
        except OSError as exc:
            raise CredentialError("The credential file cannot be written.") from exc


def resolve_api_key(
    provider_id: str,
    store: CredentialStore,
    env: Mapping[str, str],
    env_var: str | None,
    literal: Secret | None = None,
) -> Secret | None:
    """The key to use for `provider_id`: a stored key, else a providers.json literal, else its environment variable."""
    stored = store.api_key(provider_id)
    if stored is not None:
        return stored
    if literal is not None:
        return literal
    value = env.get(env_var, "") if env_var else ""
    return Secret(value) if value else None


def file_mode(path: Path) -> int:
    """Permission bits of `path` (for checks and tests)."""
    return stat.S_IMODE(path.stat().st_mode)

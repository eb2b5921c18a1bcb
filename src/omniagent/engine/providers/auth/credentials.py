"""Credentials: API keys and device-login grants, each in a 0600 JSON file under the caller's data dir, plus keys
from the environment.

Keys and tokens leave this module only inside a `Secret`, whose repr and str are redacted; `Secret.reveal()` is
called only where one goes into an HTTP header (the provider constructors, via `resolve.open_provider`, and
`grants.GrantAuth`) or into the file that keeps it.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from omniagent.errors import OmniagentError
from omniagent.files import write_whole

CREDENTIALS_FILE = "credentials.json"  # name of the key file inside the data dir
GRANTS_FILE = "logins.json"  # name of the device-login grant file inside the data dir
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


@dataclass(frozen=True, slots=True)
class Grant:
    """What a device login obtained for one provider.

    `access_token` is the OAuth token (with its `refresh_token` and expiry when the server gave them). A provider
    with a token exchange (GitHub Copilot) also keeps the API token the exchange answered, the time to fetch a
    new one (`api_refresh_at_ms`), and the API base URL the exchange named.
    """

    access_token: Secret
    refresh_token: Secret | None = None
    expires_at_ms: int | None = None
    api_token: Secret | None = None
    api_refresh_at_ms: int | None = None
    api_base: str | None = None

    def lapsed(self, now_ms: int) -> bool:
        """Whether the OAuth token expired with no way to renew it (the provider needs a new login)."""
        return self.expires_at_ms is not None and now_ms >= self.expires_at_ms and self.refresh_token is None

    def to_json(self) -> dict[str, Any]:
        """The form kept in the grant file (tokens revealed: the file is 0600)."""
        secrets = {"access_token": self.access_token, "refresh_token": self.refresh_token, "api_token": self.api_token}
        plain = {"expires_at_ms": self.expires_at_ms, "api_refresh_at_ms": self.api_refresh_at_ms}
        out: dict[str, Any] = {name: value.reveal() for name, value in secrets.items() if value is not None}
        out |= {name: value for name, value in (plain | {"api_base": self.api_base}).items() if value is not None}
        return out

    @classmethod
    def from_json(cls, value: object) -> Grant:
        """A grant read from the file.

        Raises:
            CredentialError: `value` is not a grant object.
        """
        if not isinstance(value, dict) or not isinstance(value.get("access_token"), str):
            raise CredentialError("The grant file holds an entry that is not a grant.")

        def secret(name: str) -> Secret | None:
            found = value.get(name)
            return Secret(found) if isinstance(found, str) and found else None

        def number(name: str) -> int | None:
            found = value.get(name)
            return found if isinstance(found, int) and not isinstance(found, bool) else None

        base = value.get("api_base")
        return cls(
            access_token=Secret(value["access_token"]),
            refresh_token=secret("refresh_token"),
            expires_at_ms=number("expires_at_ms"),
            api_token=secret("api_token"),
            api_refresh_at_ms=number("api_refresh_at_ms"),
            api_base=base if isinstance(base, str) else None,
        )


T = TypeVar("T")


class CredentialStore:
    """Stored API keys by provider id in `<data_dir>/credentials.json`, and device-login grants in
    `<data_dir>/logins.json` (both mode 0600, written atomically)."""

    def __init__(self, data_dir: Path) -> None:
        self._path = data_dir / CREDENTIALS_FILE
        self._grants_path = data_dir / GRANTS_FILE

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
        """Forget the stored key and the grant of `provider_id`; returns whether there was either."""
        keys = self._read()
        had_key = keys.pop(provider_id, None) is not None
        if had_key:
            self._write(keys)
        grants = self._read_grants()
        had_grant = grants.pop(provider_id, None) is not None
        if had_grant:
            _write_private(self._grants_path, {pid: g.to_json() for pid, g in grants.items()}, "grant")
        return had_key or had_grant

    def grant(self, provider_id: str) -> Grant | None:
        """The device-login grant of `provider_id`, if any.

        Raises:
            CredentialError: the grant file exists but is a symlink or not an object of grants.
        """
        return self._read_grants().get(provider_id)

    def set_grant(self, provider_id: str, grant: Grant) -> None:
        """Store (or replace) the grant of `provider_id`.

        Raises:
            CredentialError: the grant file cannot be read or written.
        """
        grants = self._read_grants()
        grants[provider_id] = grant
        _write_private(self._grants_path, {pid: g.to_json() for pid, g in grants.items()}, "grant")

    def _read(self) -> dict[str, str]:
        def keys(value: object) -> dict[str, str]:
            if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
                raise CredentialError("The credential file must map provider ids to key strings.")
            return value

        return _read_private(self._path, "credential", keys)

    def _read_grants(self) -> dict[str, Grant]:
        def grants(value: object) -> dict[str, Grant]:
            if not isinstance(value, dict):
                raise CredentialError("The grant file must map provider ids to grants.")
            return {str(pid): Grant.from_json(entry) for pid, entry in value.items()}

        return _read_private(self._grants_path, "grant", grants)

    def _write(self, keys: dict[str, str]) -> None:
        _write_private(self._path, keys, "credential")


def _read_private(path: Path, what: str, shape: Callable[[object], dict[str, T]]) -> dict[str, T]:
    """A private JSON file's content checked by `shape` (an absent file is empty); errors name `what` file."""
    try:
        if path.is_symlink():
            raise CredentialError(f"The {what} file is a symlink; refusing to read it.")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise CredentialError(f"The {what} file cannot be read.") from exc
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise CredentialError(f"The {what} file is not valid JSON.") from exc
    return shape(value)


def _write_private(path: Path, value: object, what: str) -> None:
    try:
        path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        write_whole(path, json.dumps(value, indent=2, sort_keys=True), mode=FILE_MODE, durable=True)
    except OSError as exc:
        raise CredentialError(f"The {what} file cannot be written.") from exc


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

"""agents.json: the model slots (`small`, `medium`) child sessions may run on, in the config dir beside
providers.json (docs/engine.md "agents.json").

The file is the yuke `AgentsConfig` document, parsed strictly (a field the document does not define is an
error, not ignored as on the wire). Its revision (`AgentConfigRev`) is the SHA-256 of its bytes; an absent file
reads as `{}`. A write replaces the file atomically, under an exclusive lock on the config dir, and only when the
caller's revision is still the file's (compare and swap), so two frontends never overwrite each other unseen.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from omniagent.engine.errors import EngineError
from omniagent.engine.model_access import ModelAccess
from omniagent.files import write_whole
from omniagent.protocols.yuke.agents import AgentModel, AgentModelSlot, AgentsConfig
from omniagent.protocols.yuke.base import DecodeError, decode
from omniagent.protocols.yuke.envelope import ErrorCode

FILE_NAME = "agents.json"
EMPTY = b"{}"
# The fields of the document, level by level: anything else in the file is an error.
_FIELDS: dict[str, Any] = {"models": {"small": {"model": None, "reasoning": None}, "medium": None}}
_FIELDS["models"]["medium"] = _FIELDS["models"]["small"]


class AgentsFile:
    """The agents.json of one engine, read fresh on every use (another process may change it)."""

    def __init__(self, config_dir: Path, model_access: ModelAccess) -> None:
        self.path = config_dir / FILE_NAME
        self._config_dir = config_dir
        self._model_access = model_access

    def read(self) -> tuple[str, AgentsConfig]:
        """The revision and the document.

        Raises:
            EngineError: internal, the file is unreadable or not a valid document (the sentence says why).
        """
        raw = self._bytes()
        return revision_of(raw), parse(raw)

    def update(self, revision: str, config: AgentsConfig) -> str:
        """Replace the document when `revision` is still the file's; returns the new revision. Each slot is
        checked first (`check_slot`).

        Raises:
            EngineError: config_conflict (the file changed since `revision`), a slot's refusal, runtime_failed
                (the file could not be written).
        """
        for model in (config.models.small, config.models.medium):
            if model is not None:
                self.check_slot(model)
        data = (json.dumps(config.dump(), indent=2) + "\n").encode()
        try:
            with self._locked():
                if revision_of(self._bytes()) != revision:
                    raise EngineError(ErrorCode.CONFIG_CONFLICT, "agents.json changed since that revision")
                write_whole(self.path, data, durable=True)
        except OSError as exc:
            raise EngineError(ErrorCode.RUNTIME_FAILED, f"agents.json could not be written: {exc.strerror}") from None
        return revision_of(data)

    def resolve(self, slot: AgentModelSlot) -> tuple[str, str, str]:
        """(model, reasoning, revision) of a slot: the slot's reasoning, else the model's default.

        Raises:
            EngineError: setup_required (the slot is not set), a refusal of `check_slot`, a bad file.
        """
        revision, config = self.read()
        model = getattr(config.models, slot)
        if model is None:
            raise EngineError(ErrorCode.SETUP_REQUIRED, f"the {slot} agent model is not set in agents.json")
        selector, reasoning = self.check_slot(model)
        return selector, reasoning, revision

    def check_slot(self, model: AgentModel) -> tuple[str, str]:
        """The slot's model and reasoning, when a child can run on them now: a known model whose provider is ready
        and that calls tools, at a level it has (unsupported_model / auth_required / unsupported_reasoning)."""
        return self._model_access.choose_ready(model.model, model.reasoning)

    def _bytes(self) -> bytes:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return EMPTY
        except OSError as exc:
            raise EngineError(ErrorCode.INTERNAL, f"agents.json could not be read: {exc.strerror}") from None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self._config_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._config_dir, os.O_RDONLY | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock


def revision_of(raw: bytes) -> str:
    """`AgentConfigRev`: the SHA-256 of the file's bytes, lowercase hex."""
    return hashlib.sha256(raw).hexdigest()


def parse(raw: bytes) -> AgentsConfig:
    """The document, strictly.

    Raises:
        EngineError: internal, naming what is wrong.
    """
    try:
        value = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        raise EngineError(ErrorCode.INTERNAL, "agents.json is not valid JSON") from None
    unknown = _unknown(value, _FIELDS, "")
    if unknown is not None:
        raise EngineError(ErrorCode.INTERNAL, f"agents.json: {unknown}")
    try:
        return decode(AgentsConfig, value)
    except DecodeError:
        raise EngineError(ErrorCode.INTERNAL, "agents.json: a field has the wrong type") from None


def _unknown(value: object, fields: dict[str, Any], where: str) -> str | None:
    """The first problem of shape: not an object where one is due, or a field the document does not define."""
    if not isinstance(value, dict):
        return f"{where or 'the document'} must be an object"
    for key, item in value.items():
        if key not in fields:
            return f"unknown field {where + '.' if where else ''}{key}"
        inner = fields[key]
        if inner is not None and item is not None:
            problem = _unknown(item, inner, f"{where + '.' if where else ''}{key}")
            if problem is not None:
                return problem
    return None

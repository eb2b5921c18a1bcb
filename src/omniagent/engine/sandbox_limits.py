"""The `exec` limits as the user sets them: the engine-wide defaults in `<config_dir>/sandbox.json`, and one
session's changes through `session.set_sandbox`'s `limits` object (`LimitsParams`, the same fields in both).

sandbox.json::

    {"limits": {"processes": 1024, "memory_mb": 4096, "session_processes": 2048, "session_memory_mb": 8192,
                "cpu_seconds": 600, "output_mb": 16, "tmp_mb": 512, "file_mb": 4096, "disk_mb": 10240}}

Every field is optional (absent: the built-in default, tools/shell/limits.py); sizes are in MiB; unknown fields are
errors, so a typo never silently drops a limit. The file is read when the engine starts. A bad file does not stop
the engine: every `exec` then fails with the sentence saying what is wrong, so nothing runs under limits the user
did not mean.

What this is not: the limits' enforcement (tools/shell/limits.py) nor the other sandbox settings (sandboxes.py).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import msgspec

from omniagent.engine.tools.shell.limits import ExecLimits, MiB
from omniagent.errors import OmniagentError
from omniagent.protocols.yuke.base import YukeModel

__all__ = ["SANDBOX_FILE", "LimitsParams", "SandboxFileError", "limits_of", "load_limits", "params_of"]

SANDBOX_FILE = "sandbox.json"
# Counts and MiB: at least 1, and at most what fits the kernel's 64-bit limits once made bytes.
Count = Annotated[int, msgspec.Meta(ge=1, le=2**31)]
Megabytes = Annotated[int, msgspec.Meta(ge=1, le=2**40)]


class LimitsParams(YukeModel, forbid_unknown_fields=True):
    """The `exec` limits, as sandbox.json's `limits` and `session.set_sandbox`'s `limits` give them: only the fields
    given change. Counts of processes and threads at once, CPU seconds per process, sizes in MiB; `disk_mb` absent
    from an answer means half of the workspace's free space when a command starts."""

    processes: Count | None = None
    memory_mb: Megabytes | None = None
    session_processes: Count | None = None
    session_memory_mb: Megabytes | None = None
    cpu_seconds: Count | None = None
    output_mb: Megabytes | None = None
    tmp_mb: Megabytes | None = None
    file_mb: Megabytes | None = None
    disk_mb: Megabytes | None = None


class _SandboxFile(msgspec.Struct, forbid_unknown_fields=True):
    limits: LimitsParams = msgspec.field(default_factory=LimitsParams)


class SandboxFileError(OmniagentError):
    """sandbox.json is unreadable or invalid; the message says which rule failed and where."""


def limits_of(params: LimitsParams, base: ExecLimits) -> ExecLimits:
    """`base` with the fields `params` gives."""

    def mib(value: int | None, current: int) -> int:
        return current if value is None else value * MiB

    return replace(
        base,
        processes=params.processes or base.processes,
        memory_bytes=mib(params.memory_mb, base.memory_bytes),
        session_processes=params.session_processes or base.session_processes,
        session_memory_bytes=mib(params.session_memory_mb, base.session_memory_bytes),
        cpu_seconds=params.cpu_seconds or base.cpu_seconds,
        output_bytes=mib(params.output_mb, base.output_bytes),
        tmp_bytes=mib(params.tmp_mb, base.tmp_bytes),
        file_bytes=mib(params.file_mb, base.file_bytes),
        disk_bytes=base.disk_bytes if params.disk_mb is None else params.disk_mb * MiB,
    )


def params_of(limits: ExecLimits) -> LimitsParams:
    """Every limit in force, in the wire's units (whole MiB, rounded down)."""
    return LimitsParams(
        processes=limits.processes,
        memory_mb=limits.memory_bytes // MiB,
        session_processes=limits.session_processes,
        session_memory_mb=limits.session_memory_bytes // MiB,
        cpu_seconds=limits.cpu_seconds,
        output_mb=limits.output_bytes // MiB,
        tmp_mb=limits.tmp_bytes // MiB,
        file_mb=limits.file_bytes // MiB,
        disk_mb=None if limits.disk_bytes is None else limits.disk_bytes // MiB,
    )


def load_limits(config_dir: Path | None) -> ExecLimits:
    """The engine's default limits: the built-ins with `<config_dir>/sandbox.json`'s (none when there is no file).

    Raises:
        SandboxFileError: the file cannot be read, is not JSON, or breaks the schema.
    """
    defaults = ExecLimits()
    if config_dir is None:
        return defaults
    path = config_dir / SANDBOX_FILE
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        return defaults
    except OSError as exc:
        raise SandboxFileError(f"{path} cannot be read ({(exc.strerror or 'error').lower()})") from None
    try:
        parsed = msgspec.json.decode(text, type=_SandboxFile)
    except msgspec.ValidationError as exc:
        raise SandboxFileError(f"{path} is invalid ({exc})") from None
    except msgspec.DecodeError:
        raise SandboxFileError(f"{path} is not JSON") from None
    return limits_of(parsed.limits, defaults)

"""`<config_dir>/sandbox.json`, the engine-wide defaults of the `exec` sandbox: its limits, and its network
allowlist with pinned hosts; and the `limits` object `session.set_sandbox` takes (`LimitsParams`, the same fields).

sandbox.json::

    {"limits": {"processes": 1024, "memory_mb": 4096, "session_processes": 2048, "session_memory_mb": 8192,
                "cpu_seconds": 600, "output_mb": 16, "tmp_mb": 512, "file_mb": 4096, "disk_mb": 10240},
     "network": {"allowed_domains": ["pypi.org", "*.pythonhosted.org"], "hosts": {"mirror.internal": "10.0.0.5"}}}

Every field is optional (absent: the built-in default, the sandbox's `ExecLimits`; no domain); sizes are in MiB; unknown
fields, bad values and domain rules that are not rules are errors, so a typo never silently drops a limit or
changes what the network reaches. The file is read when the engine starts. A bad file does not stop the engine:
every `exec` then fails with the sentence saying what is wrong, so nothing runs under settings the user did not mean.

What this is not: the limits' enforcement and the allowlist's rules (omniagent.sandbox), nor the per-session
settings (sandboxes.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated

import msgspec

from omniagent.errors import OmniagentError
from omniagent.protocols.yuke.base import YukeModel
from omniagent.sandbox import ExecLimits, MiB, NetworkConfig, network_config

__all__ = ["SANDBOX_FILE", "LimitsParams", "SandboxDefaults", "SandboxFileError", "limits_of", "load", "params_of"]

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


class _Network(msgspec.Struct, forbid_unknown_fields=True):
    allowed_domains: list[str] = msgspec.field(default_factory=list)
    hosts: dict[str, str | list[str]] = msgspec.field(default_factory=dict)


class _SandboxFile(msgspec.Struct, forbid_unknown_fields=True):
    limits: LimitsParams = msgspec.field(default_factory=LimitsParams)
    network: _Network = msgspec.field(default_factory=_Network)


@dataclass(frozen=True, slots=True)
class SandboxDefaults:
    """What sandbox.json sets for every session of the engine."""

    limits: ExecLimits = field(default_factory=ExecLimits)
    network: NetworkConfig = field(default_factory=NetworkConfig)


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


def load(config_dir: Path | None) -> SandboxDefaults:
    """The engine's sandbox defaults: the built-ins with `<config_dir>/sandbox.json`'s (none when there is no file).

    Raises:
        SandboxFileError: the file cannot be read, is not JSON, or breaks the schema or the allowlist's rules.
    """
    if config_dir is None:
        return SandboxDefaults()
    path = config_dir / SANDBOX_FILE
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        return SandboxDefaults()
    except OSError as exc:
        raise SandboxFileError(f"{path} cannot be read ({(exc.strerror or 'error').lower()})") from None
    try:
        parsed = msgspec.json.decode(text, type=_SandboxFile)
    except msgspec.ValidationError as exc:
        raise SandboxFileError(f"{path} is invalid ({exc})") from None
    except msgspec.DecodeError:
        raise SandboxFileError(f"{path} is not JSON") from None
    try:
        network = network_config(parsed.network.allowed_domains, parsed.network.hosts)
    except ValueError as exc:
        raise SandboxFileError(f"{path} is invalid (network: {exc})") from None
    return SandboxDefaults(limits_of(parsed.limits, ExecLimits()), network)

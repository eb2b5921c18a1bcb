"""Control groups for sandboxed `exec` commands: find a hierarchy this process may write, then make, limit, read and
remove one group per command, inside one group per session, inside the engine's own group.

Layout, in every hierarchy that has the controller (cgroup v1: the `pids` and the `memory` hierarchy; cgroup v2: the
one unified hierarchy), under the cgroup the engine itself runs in (so any limit placed on the engine still holds)::

    <the engine's cgroup>/omniagent-<engine pid>/s-<session>/c-<n>

The engine group is made at the first command and removed when the engine exits; groups a crashed engine left are
removed at the next engine's first command. A session group exists while one of its commands runs (making one is a
`mkdir` and two small writes, well under a millisecond), so no session's group outlives its commands.

cgroup v2 allows controllers in a group's children only when the group itself holds no process; the engine's own
group holds the engine. When that group holds nothing else (`systemd-run --user --scope -p Delegate=yes omniagent …`),
the engine moves itself into a leaf beside its groups, as a delegated service is expected to. Otherwise, and where
nothing is writable (a user's session scope, a container's read-only /sys/fs/cgroup), `hierarchy()` is None and the
limits fall back to rlimits (limits.py).

What this is not: the limits' values and what a hit says (limits.py), nor when a command is stopped (run.py).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import errno
import functools
import itertools
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["CommandGroup", "Controller", "GroupEvents", "Hierarchy", "Scope", "hierarchy"]

Controller = Literal["pids", "memory"]
Scope = Literal["command", "session", "machine"]
CONTROLLERS: tuple[Controller, ...] = ("pids", "memory")
ENGINE_PREFIX = "omniagent-"
_ENGINE_GROUP = re.compile(rf"{ENGINE_PREFIX}(\d+)")
# The leaf a v2 engine moves itself into (beside its groups) so that its own group may enable controllers.
SELF_LEAF = "engine"
_MIB = 1024 * 1024
# Seconds before the first retry to remove a group that still held a dying process, and the last (doubling between).
RETRY_FIRST = 0.01
RETRY_LAST = 2.0


@dataclass(frozen=True, slots=True)
class GroupEvents:
    """What a command's group has seen so far: whether a fork of the command was refused, and whether the kernel
    killed one of its processes for memory, each with whose limit it was (None: it did not happen). "machine": not
    the command's nor its session's, so the machine's or that of the group the engine itself runs in."""

    fork_refused: Scope | None = None
    oom_killed: Scope | None = None


class Hierarchy:
    """The writable cgroup hierarchy found for this process: the engine group's directory per controller."""

    def __init__(self, version: Literal[1, 2], engine_dirs: Mapping[Controller, Path]) -> None:
        self.version = version
        self.engine_dirs = dict(engine_dirs)
        self._counter = itertools.count(1)
        self._running: dict[str, int] = {}  # session group name -> its commands running now
        self._written: dict[tuple[str, str], str] = {}  # (session group, file) -> the value last written there
        self._leftover: list[Path] = []  # groups that still held a dying process when their command ended

    @property
    def controllers(self) -> tuple[Controller, ...]:
        """The controllers limits can use here."""
        return tuple(self.engine_dirs)

    def open_command(self, session: str, values: Mapping[Controller, tuple[int, int]]) -> CommandGroup:
        """Make a command's group, inside its session's (made if needed; none when `session` is empty).

        `values`: per controller, (the session's limit, the command's limit): tasks for `pids`, bytes for `memory`.

        Raises:
            OSError: a group could not be made or limited (the command must then not run).
        """
        self._remove_leftovers()
        name = _safe_name(session)
        if name:
            self._running[name] = self._running.get(name, 0) + 1
        command = f"c-{next(self._counter)}"
        dirs: dict[Controller, Path] = {}
        session_dirs: dict[Controller, Path] = {}
        try:
            for base, controllers in self._by_directory().items():
                parent = base
                if name:
                    parent = base / f"s-{name}"
                    if self._make(parent, controllers):
                        # A group made now has the kernel's defaults, whatever was written to one of its name before.
                        self._written = {key: text for key, text in self._written.items() if key[0] != name}
                    for controller in controllers:
                        self._limit(parent, controller, values[controller][0], remember=name)
                        session_dirs[controller] = parent
                self._make(parent / command, ())
                for controller in controllers:
                    dirs[controller] = parent / command
                    self._limit(parent / command, controller, values[controller][1])
        except BaseException:
            self._close(name, [(base / f"s-{name}" if name else base) / command for base in self._by_directory()])
            raise
        return CommandGroup(self, name, dirs, session_dirs)

    def _by_directory(self) -> dict[Path, tuple[Controller, ...]]:
        """The engine group's directories, each with its controllers (v2: one directory for all)."""
        found: dict[Path, tuple[Controller, ...]] = {}
        for controller, base in self.engine_dirs.items():
            found[base] = (*found.get(base, ()), controller)
        return found

    def close_command(self, group: CommandGroup) -> None:
        """Remove a command's group (its processes are gone), and its session's when no other command runs."""
        self._close(group.session, group.dirs.values())

    def _close(self, session: str, dirs: Iterable[Path]) -> None:
        self._leftover += [path for path in dirs if not _rmdir(path)]
        left = self._running.get(session, 1) - 1
        if session and left > 0:
            self._running[session] = left
        elif session:
            self._running.pop(session, None)
            self._leftover += [path for base in self.engine_dirs.values() if not _rmdir(path := base / f"s-{session}")]
        if self._leftover:
            self._retry(RETRY_FIRST)

    def _retry(self, delay: float) -> None:
        """Remove the leftover groups a little later, and again (longer each time) while some remain: bubblewrap
        exits as soon as its init reports the command's status, while the init and its namespace are still being torn
        down, so a group can hold a dying process for a few milliseconds after the command ended."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop: the next command, or the engine's exit, removes them

        def again() -> None:
            self._remove_leftovers()
            if self._leftover and delay < RETRY_LAST:
                self._retry(delay * 2)

        loop.call_later(delay, again)

    def _remove_leftovers(self) -> None:
        if self._leftover:
            self._leftover = [path for path in self._leftover if not _rmdir(path)]

    def _make(self, path: Path, handed_down: tuple[Controller, ...]) -> bool:
        """Make a group unless it exists (whether it was made); on v2 a group hands controllers down to its children
        only when told to (`handed_down`)."""
        try:
            path.mkdir()
        except FileExistsError:
            return False
        if self.version == 2 and handed_down:
            _write(path / "cgroup.subtree_control", " ".join(f"+{c}" for c in handed_down))
        return True

    def _limit(self, path: Path, controller: Controller, value: int, remember: str = "") -> None:
        for file, text in _limit_files(self.version, controller, value, path):
            if remember and self._written.get((remember, file)) == text:
                continue
            _write(path / file, text)
            if remember:
                self._written[(remember, file)] = text

    def remove_all(self) -> None:
        """Remove the engine's groups (at exit); groups still holding a process stay."""
        for base in self.engine_dirs.values():
            _remove_tree(base)


class CommandGroup:
    """One command's group: its first process joins it (`join_files`) before the command runs; read what it saw
    (`events`), then close it once the command is gone."""

    def __init__(
        self,
        owner: Hierarchy,
        session: str,
        dirs: Mapping[Controller, Path],
        session_dirs: Mapping[Controller, Path],
    ) -> None:
        self._owner = owner
        self.session = session
        self.dirs = dict(dirs)
        self._session_dirs = dict(session_dirs)

    def join_files(self) -> list[Path]:
        """The files a process writes `0` to, to join the group itself, one per hierarchy.

        On v1 it is `tasks`: a thread moving itself there skips the kernel's global lock on group moves, whose
        release waits for an RCU grace period (measured here: 13 ms at the 90th percentile, against 0.1 ms);
        a single-threaded process moved so has moved whole. v2 has no such file outside threaded groups.
        """
        files: dict[Path, None] = {}  # v2: one directory holds both controllers
        for path in self.dirs.values():
            files[path / ("tasks" if self._owner.version == 1 else "cgroup.procs")] = None
        return list(files)

    def events(self) -> GroupEvents:
        """What the group has seen so far (a file the kernel does not offer counts as nothing seen)."""
        return GroupEvents(self._fork_refused(), self._oom_killed())

    def _fork_refused(self) -> Scope | None:
        pids = self.dirs.get("pids")
        # v1 counts here the forks this group was refused, whichever group's limit refused them; v2 (since Linux
        # 6.12) counts the refusals by this group's own limit only, so a session limit's go unseen there.
        if pids is None or not _field(_read(pids / "pids.events"), "max"):
            return None
        session = self._session_dirs.get("pids")
        if _at_limit(pids, "pids.peak", "pids.max", 0) is not False:  # a kernel without pids.peak cannot tell
            return "command"
        return "session" if session is not None and _at_limit(session, "pids.peak", "pids.max", 0) else "machine"

    def _oom_killed(self) -> Scope | None:
        memory = self.dirs.get("memory")
        if memory is None:
            return None
        session = self._session_dirs.get("memory")
        if self._owner.version == 2:
            if not _field(_read(memory / "memory.events"), "oom_kill"):
                return None
            if _field(_read(memory / "memory.events"), "oom"):  # counted in the group whose limit ran out
                return "command"
            return "session" if session is not None and _field(_read(session / "memory.events"), "oom") else "machine"
        if not _field(_read(memory / "memory.oom_control"), "oom_kill"):
            return None
        # v1's failcnt stays 0 on recent kernels; the group whose peak reached its limit (charged in batches of 64
        # pages, so within a MiB of it) is the one that ran out.
        peak, limit = "memory.max_usage_in_bytes", "memory.limit_in_bytes"
        if _at_limit(memory, peak, limit, _MIB):
            return "command"
        return "session" if session is not None and _at_limit(session, peak, limit, _MIB) else "machine"

    def close(self) -> None:
        """Remove the group (and the session's, when no other of its commands runs)."""
        self._owner.close_command(self)


def _limit_files(version: int, controller: Controller, value: int, path: Path) -> Iterator[tuple[str, str]]:
    """The (file, text) writes that set `controller`'s limit to `value` in the group at `path`."""
    if controller == "pids":
        yield "pids.max", str(value)
        return
    if version == 2:
        yield "memory.max", str(value)
        if (path / "memory.swap.max").exists():
            yield "memory.swap.max", "0"  # the limit is memory, not memory plus whatever swap there is
        return
    # v1: the memory+swap limit may never be below the memory limit, so the order depends on the direction.
    memsw = (path / "memory.memsw.limit_in_bytes").exists()
    current = int(_read(path / "memory.limit_in_bytes") or 0)
    plain = ("memory.limit_in_bytes", str(value))
    both = ("memory.memsw.limit_in_bytes", str(value))
    if not memsw:
        yield plain
    elif value >= current:
        yield both
        yield plain
    else:
        yield plain
        yield both


@functools.cache
def hierarchy() -> Hierarchy | None:
    """The writable hierarchy for this process's commands (found once), or None when none is usable here."""
    try:
        mounts = _mounts(Path("/proc/self/mountinfo").read_text())
        own = _own_paths(Path("/proc/self/cgroup").read_text())
    except OSError:
        return None
    found = _v1(mounts, own) or _v2(mounts, own)
    if found is not None:
        atexit.register(found.remove_all)
    return found


def _v1(mounts: list[tuple[str, Path, str, set[str]]], own: dict[str, str]) -> Hierarchy | None:
    dirs: dict[Controller, Path] = {}
    for controller in CONTROLLERS:
        for root, point, fstype, options in mounts:
            if fstype == "cgroup" and controller in options and controller in own:
                own_dir = _inside(point, root, own[controller])
                engine = _engine_group(own_dir) if own_dir is not None else None
                if engine is not None:
                    dirs[controller] = engine
                    break
    return Hierarchy(1, dirs) if dirs else None


def _v2(mounts: list[tuple[str, Path, str, set[str]]], own: dict[str, str]) -> Hierarchy | None:
    if "" not in own:
        return None
    for root, point, fstype, _options in mounts:
        if fstype != "cgroup2":
            continue
        own_dir = _inside(point, root, own[""])
        if own_dir is None:
            continue
        offered = set(_read(own_dir / "cgroup.controllers").split())
        wanted = [c for c in CONTROLLERS if c in offered]
        if not wanted or not _enable(own_dir, wanted):
            return None
        engine = _engine_group(own_dir)
        if engine is None:
            return None
        try:
            _write(engine / "cgroup.subtree_control", " ".join(f"+{c}" for c in wanted))
        except OSError:
            return None
        return Hierarchy(2, dict.fromkeys(wanted, engine))
    return None


def _enable(own_dir: Path, wanted: list[Controller]) -> bool:
    """Whether `wanted` are (or could be made) available to the children of the engine's own v2 group."""
    enabled = set(_read(own_dir / "cgroup.subtree_control").split())
    if all(c in enabled for c in wanted):
        return True
    change = " ".join(f"+{c}" for c in wanted)
    try:
        _write(own_dir / "cgroup.subtree_control", change)
        return True
    except OSError as exc:
        if exc.errno != errno.EBUSY:
            return False
    # Busy: the group holds processes. When the engine is all it holds, the engine moves into a leaf of its own.
    if _read(own_dir / "cgroup.procs").split() != [str(os.getpid())]:
        return False
    try:
        (own_dir / SELF_LEAF).mkdir(exist_ok=True)
        _write(own_dir / SELF_LEAF / "cgroup.procs", str(os.getpid()))
        _write(own_dir / "cgroup.subtree_control", change)
    except OSError:
        return False
    return True


def _engine_group(own_dir: Path) -> Path | None:
    """Make this engine's group in `own_dir` (removing those of engines that are gone); None when not writable."""
    with contextlib.suppress(OSError):
        for entry in own_dir.iterdir():
            match = _ENGINE_GROUP.fullmatch(entry.name)
            if match and not _alive(int(match.group(1))):
                _remove_tree(entry)
    engine = own_dir / f"{ENGINE_PREFIX}{os.getpid()}"
    try:
        engine.mkdir(exist_ok=True)
    except OSError:
        return None
    if not os.access(engine / "cgroup.procs", os.W_OK):
        _rmdir(engine)
        return None
    return engine


def _mounts(mountinfo: str) -> list[tuple[str, Path, str, set[str]]]:
    """(root, mount point, fs type, super options) of every cgroup mount in /proc/self/mountinfo."""
    found = []
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        found.append((_unescape(fields[3]), Path(_unescape(fields[4])), tail[0], set(tail[2].split(","))))
    return found


def _own_paths(text: str) -> dict[str, str]:
    """Controller name -> this process's group path, from /proc/self/cgroup (v2's line under the name "")."""
    own: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for name in parts[1].split(",") if parts[1] else [""]:
            own[name] = parts[2]
    return own


def _inside(point: Path, root: str, own: str) -> Path | None:
    """The directory of the group `own` under a mount of the hierarchy's `root` at `point`."""
    if own != root and not own.startswith(root.rstrip("/") + "/"):
        return None
    rel = own[len(root) :].lstrip("/")
    path = point / rel if rel else point
    return path if path.is_dir() else None


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def _safe_name(session: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", session)[:64]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, text: str) -> None:
    # One write(2) per value: a cgroup file takes each write as one whole value.
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _at_limit(group: Path, peak_file: str, limit_file: str, slack: int) -> bool | None:
    """Whether the group's peak reached its limit (within `slack`); None when the kernel does not say."""
    peak, limit = _number(group / peak_file), _number(group / limit_file)
    if peak is None:
        return None
    return limit is not None and peak + slack >= limit


def _number(path: Path) -> int | None:
    text = _read(path).strip()
    return int(text) if text.isdigit() else None


def _field(text: str, name: str) -> int:
    """The number after `name` in a cgroup "key value" file (0 when absent)."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == name and value.strip().isdigit():
            return int(value)
    return 0


def _rmdir(path: Path) -> bool:
    """Remove an empty group; whether it is gone."""
    try:
        path.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _remove_tree(path: Path) -> None:
    """Remove a group and the groups inside it, deepest first; busy ones stay."""
    with contextlib.suppress(OSError):
        for entry in path.iterdir():
            if entry.is_dir():
                _remove_tree(entry)
    _rmdir(path)

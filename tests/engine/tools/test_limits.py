"""The `exec` limits at the tool level (issue 22; docs/security.md, "Limits"): each limit stops a real command in the
real sandbox with one sentence naming the limit, a build-like command still works under the defaults, and the
cgroups a command used are gone once it ends.

Run as root (CI, this machine): the cgroup limits apply there. The last test runs the engine's side as `nobody`
(setpriv), where no cgroup is writable, to check the rlimit fallback."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from omniagent.engine.tools import default_tools
from omniagent.engine.tools.context import ToolResult
from omniagent.sandbox import ExecLimits, MiB, SandboxPolicy
from omniagent.sandbox.cgroups import hierarchy

from .conftest import WAIT_LIMIT, make_ctx
from .test_sandbox import _none_with_marker, _with_marker

# The interpreter itself, not the venv's link to it (the sandbox hides nothing here, but a venv may live under /tmp).
PYTHON = os.path.realpath(sys.executable)
AS_ROOT = os.geteuid() == 0
HOW = "the user can change it in sandbox.json or with session.set_sandbox; see docs/security.md"


async def _exec(workspace: Path, command: str, *, seconds: float = 20.0, **limits: Any) -> ToolResult:
    """Run `command` sandboxed under `limits` (the defaults for the rest), with a timeout of `seconds`."""
    policy = SandboxPolicy(mode="sandboxed", limits=ExecLimits(**limits))
    run = default_tools().run("exec", {"command": command, "timeout": seconds}, make_ctx(workspace, sandbox=policy))
    return await asyncio.wait_for(run, seconds + WAIT_LIMIT)


def _status(result: ToolResult) -> str:
    """The line after the output: the exit code, or the limit the command hit."""
    lines = result.output.splitlines()
    return next(line for line in reversed(lines) if not line.startswith("[the command ran in the exec sandbox"))


async def test_300_background_processes_are_stopped_by_the_process_limit(workspace: Path) -> None:
    """The probe on main started 205 processes unhindered. With `processes` 64, 300 background sleeps are refused
    past the limit, the command is stopped at once (not at its timeout) and every sleep is gone."""
    marker = "41.4213"
    loop = asyncio.get_running_loop()
    started = loop.time()
    result = await _exec(workspace, f"for i in $(seq 300); do sleep {marker} & done; wait", processes=64)
    assert result.is_error
    assert _status(result) == (
        f"[stopped: the command tried to run more than 64 processes and threads at once (the limit `processes`; {HOW})]"
    )
    assert loop.time() - started < 10.0  # stopped, not timed out after 20 s
    assert await _none_with_marker(marker)


async def test_a_session_limit_bounds_the_sessions_running_commands_together(workspace: Path) -> None:
    """Per session: two commands of one session each start 40 sleeps, within their own limit of 1024 but together
    past the session's 64. The second is stopped with the session's sentence; the first, still waiting, is not
    touched and ends normally once released."""
    marker = "42.7182"
    release = workspace / "release"
    os.mkfifo(release)
    ready = asyncio.Event()
    limits = ExecLimits(processes=1024, session_processes=64, session="s1")
    policy = SandboxPolicy(mode="sandboxed", limits=limits)
    first_ctx = make_ctx(workspace, lambda text: ready.set() if "first ready" in text else None, sandbox=policy)
    first_command = f"for i in $(seq 40); do sleep {marker} & done; echo first ready; read _ < release; echo first done"
    first = asyncio.ensure_future(default_tools().run("exec", {"command": first_command, "timeout": 20}, first_ctx))
    writer = -1
    try:
        await asyncio.wait_for(ready.wait(), WAIT_LIMIT)
        second_command = f"for i in $(seq 40); do sleep {marker} & done; echo second done"
        second = await asyncio.wait_for(
            default_tools().run("exec", {"command": second_command}, make_ctx(workspace, sandbox=policy)), WAIT_LIMIT
        )
        assert "second done" not in second.output
        assert _status(second) == (
            "[stopped: the session's running commands together tried to run more than 64 processes and threads at "
            f"once (the limit `session_processes`; {HOW})]"
        )
        # Read-write never blocks on a FIFO: the first command's `read` gets the line whenever it opens its end.
        writer = os.open(release, os.O_RDWR)
        os.write(writer, b"go\n")
        done = await asyncio.wait_for(first, WAIT_LIMIT)
    finally:
        first.cancel()
        if writer >= 0:
            os.close(writer)
    assert done.output.splitlines()[-2:] == ["first done", "[exit code 0]"], done.output
    assert await _none_with_marker(marker)


async def test_a_768_mib_allocation_is_killed_by_the_memory_limit(workspace: Path) -> None:
    """The probe on main allocated 768 MiB unhindered. Under `memory_mb` 256 the process is killed (in a cgroup, as
    here and in CI) and the model is told which limit; without a cgroup a process cannot allocate past it."""
    command = f"{PYTHON} -c 'b = bytearray(768 << 20); print(\"allocated\", len(b))'"
    result = await _exec(workspace, command, memory_bytes=256 * MiB, session="m1")  # the session's own is far above
    assert result.is_error
    assert "allocated" not in result.output
    found = hierarchy()
    if found is not None and "memory" in found.controllers:
        assert _status(result) == (
            f"[killed: the command used more than 256 MiB of memory (the limit `memory_mb`; {HOW})]"
        )
    else:
        assert "MemoryError" in result.output


async def test_the_session_memory_limit_bounds_the_sessions_commands(workspace: Path) -> None:
    """A command within its own memory limit (2 GiB) but past the session's (256 MiB) is killed with the session's
    sentence (in a cgroup; without one there is no session limit, docs/security.md)."""
    found = hierarchy()
    if found is None or "memory" not in found.controllers:
        pytest.skip("no writable memory cgroup here: a session memory limit needs one (docs/security.md)")
    command = f"{PYTHON} -c 'b = bytearray(768 << 20); print(\"allocated\", len(b))'"
    result = await _exec(workspace, command, memory_bytes=2048 * MiB, session_memory_bytes=256 * MiB, session="s2")
    assert "allocated" not in result.output
    assert _status(result) == (
        "[killed: the session's running commands together used more than 256 MiB of memory "
        f"(the limit `session_memory_mb`; {HOW})]"
    )


async def test_a_limit_above_the_engines_is_not_blamed_on_the_command(workspace: Path) -> None:
    """When the group the engine runs in is what runs out (here its own group gets 256 MiB and 48 tasks, while the
    command and its session may have far more), the model is told the machine had no room, not to change a limit
    that was not hit."""
    found = hierarchy()
    if found is None or set(found.controllers) != {"pids", "memory"}:
        pytest.skip("needs writable pids and memory cgroups (root on this machine and in CI)")
    engine_limits = {
        found.engine_dirs["pids"] / "pids.max": str(48),
        found.engine_dirs["memory"] / "memory.limit_in_bytes": str(256 * MiB),
    }
    for path, value in engine_limits.items():
        path.write_text(value)
    try:
        many = await _exec(workspace, "for i in $(seq 300); do sleep 45.1 & done; wait", session="e1")
        big = await _exec(workspace, f"{PYTHON} -c 'b = bytearray(768 << 20)'", session="e1")
    finally:
        found.engine_dirs["memory"].joinpath("memory.limit_in_bytes").write_text("-1")
        found.engine_dirs["pids"].joinpath("pids.max").write_text("max")
    assert _status(many) == (
        "[stopped: the command could not start another process although it was within its limits: the machine, or "
        "the group the engine runs in, has no room for more]"
    )
    assert _status(big) == (
        "[killed: the machine ran out of memory and the kernel killed a process of the command, which was within "
        "its own limits]"
    )


async def test_a_cpu_spin_is_killed_by_the_cpu_limit(workspace: Path) -> None:
    """RLIMIT_CPU holds for root too: a busy loop under `cpu_seconds` 1 gets SIGXCPU after one CPU second, long
    before its 20 s timeout."""
    result = await _exec(workspace, f"{PYTHON} -c 'while True: pass'", cpu_seconds=1)
    assert result.is_error
    assert _status(result) == (
        "[killed: a process of the command used more than 1 s of CPU time (SIGXCPU, exit code 152; "
        f"the limit `cpu_seconds`; {HOW})]"
    )


@pytest.mark.parametrize("mode", ["sandboxed", "unsandboxed"])
async def test_endless_output_is_stopped_by_the_output_limit(workspace: Path, mode: str) -> None:
    """`yes` used to be read until its timeout; past `output_mb` it is stopped, sandboxed or not (the engine reads
    the output either way), and the model still sees the head and tail."""
    marker = "yes-43.1415"
    policy = SandboxPolicy(mode=mode, limits=ExecLimits(output_bytes=1 * MiB))
    loop = asyncio.get_running_loop()
    started = loop.time()
    run = default_tools().run("exec", {"command": f"yes {marker}", "timeout": 20}, make_ctx(workspace, sandbox=policy))
    result = await asyncio.wait_for(run, 20 + WAIT_LIMIT)
    assert result.is_error
    assert _status(result) == f"[stopped: the command wrote more than 1 MiB of output (the limit `output_mb`; {HOW})]"
    assert result.output.startswith(f"{marker}\n")
    assert loop.time() - started < 10.0
    assert await _none_with_marker(marker)


async def test_tmp_dev_shm_and_run_hold_at_most_the_tmp_limit_and_dev_is_read_only(workspace: Path) -> None:
    """The probe on main wrote 256 MiB into a /tmp sized at half the machine's memory. Each RAM-backed writable
    place is now sized by `tmp_mb`: 32 MiB fit, 100 MiB fail with ENOSPC, and /dev itself (a writable tmpfs of half
    the memory before) is read-only while its devices work."""
    script = "; ".join(
        f"head -c 32M /dev/zero > {place}/fits && echo fits {place}; "
        f"rm -f {place}/fits; head -c 100M /dev/zero > {place}/big || echo refused {place}"
        for place in ("/tmp", "/dev/shm", "/run")
    )
    script += "; echo x > /dev/planted || echo refused /dev; echo x > /dev/null && echo devices work; false"
    result = await _exec(workspace, script, tmp_bytes=64 * MiB)
    for place in ("/tmp", "/dev/shm", "/run"):
        assert f"fits {place}" in result.output, result.output
        assert f"refused {place}" in result.output, result.output
    assert result.output.count("No space left on device") == 3
    assert "Read-only file system" in result.output
    assert "refused /dev" in result.output and "devices work" in result.output
    assert _status(result) == (
        f"[exit code 1; the sandbox's /tmp, /dev/shm and /run hold at most 64 MiB each (the limit `tmp_mb`; {HOW}); "
        "else the workspace's disk is full]"
    )


async def test_a_file_beyond_the_file_size_limit_fails(workspace: Path) -> None:
    """RLIMIT_FSIZE holds for root too: writing 32 MiB into one file under `file_mb` 16 stops at 16 MiB with
    SIGXFSZ; a program that ignores the signal (Python) gets EFBIG, and the model is told the limit either way."""
    result = await _exec(workspace, "head -c 32M /dev/zero > big", file_bytes=16 * MiB)
    assert _status(result) == (
        "[stopped: the command tried to write a file larger than 16 MiB (SIGXFSZ, exit code 153; "
        f"the limit `file_mb`; {HOW})]"
    )
    assert (workspace / "big").stat().st_size == 16 * MiB
    result = await _exec(workspace, f'{PYTHON} -c \'open("py", "wb").write(bytes(32 << 20))\'', file_bytes=16 * MiB)
    assert "File too large" in result.output
    assert _status(result) == f"[exit code 1; a file may hold at most 16 MiB (the limit `file_mb`; {HOW})]"


async def test_writing_past_the_workspace_disk_limit_stops_the_command(workspace: Path) -> None:
    """The probe on main wrote 256 MiB into the workspace unhindered. Under `disk_mb` 64 the command writing 8 files
    of 32 MiB (none past the file limit) is stopped once the workspace's file system grew by more than 64 MiB."""
    command = "for i in 1 2 3 4 5 6 7 8; do head -c 32M /dev/zero > f$i; done; echo all written"
    result = await _exec(workspace, command, disk_bytes=64 * MiB)
    assert "all written" not in result.output
    assert _status(result) == (
        f"[stopped: the command wrote more than 64 MiB to the workspace's file system (the limit `disk_mb`; {HOW}); "
        "what it wrote is still there]"
    )
    assert _size_of(workspace) < 256 * MiB


def _size_of(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.iterdir())


BUILD = r"""
set -e
printf '#include <stdio.h>\nint twice(int x) { return 2 * x; }\n' > lib.c
printf 'int twice(int);\n#include <stdio.h>\nint main(void) { printf("built %%d\\n", twice(21)); return 0; }\n' > main.c
printf 'hello: main.o lib.o\n\tcc -o hello main.o lib.o\n%%.o: %%.c\n\tcc -O2 -c $<\n' > Makefile
make -s -j4 hello && ./hello
git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm build && git log --oneline | wc -l
PYTHON -c '
import concurrent.futures, multiprocessing, subprocess
with concurrent.futures.ThreadPoolExecutor(64) as pool:
    runs = list(pool.map(lambda i: subprocess.run(["true"]).returncode, range(200)))
with multiprocessing.Pool(4) as workers:
    squares = workers.map(abs, range(-100, 0))
print("python", len(runs), sum(runs), len(squares))
'
echo "cpu $(ulimit -t) file $(ulimit -f)"
df -k /tmp | tail -1
"""


async def test_a_build_runs_under_the_default_limits(workspace: Path) -> None:
    """The control: a C build with make -j4, a git commit, and Python with 64 threads running 200 subprocesses and
    a multiprocessing pool (its semaphores live in /dev/shm) all work under the defaults; and the defaults are in
    force (they were not before): CPU 3600 s, files of 16 GiB (in 512-byte blocks), /tmp of 1 GiB."""
    result = await _exec(workspace, BUILD.replace("PYTHON", PYTHON), seconds=120)
    assert not result.is_error, result.output
    lines = result.output.splitlines()
    assert lines[0] == "built 42"
    assert lines[1] == "1"
    assert lines[2] == "python 200 0 100"
    assert lines[3] == f"cpu 3600 file {16 * 1024 * 1024 * 2}"
    assert lines[4].split()[1] == str(1024 * 1024)  # /tmp's size in KiB
    assert lines[-1] == "[exit code 0]"


async def test_a_commands_cgroups_are_gone_when_it_ends(workspace: Path) -> None:
    """While a command runs it is in its own group inside its session's, with the limits written; once it ended
    neither group is left (so sessions leave nothing behind)."""
    found = hierarchy()
    if found is None:
        pytest.skip("no writable cgroup here (docs/security.md: the rlimit fallback)")
    ready = asyncio.Event()
    limits = ExecLimits(processes=77, session_processes=99, session="s3")
    ctx = make_ctx(workspace, lambda _text: ready.set(), sandbox=SandboxPolicy(mode="sandboxed", limits=limits))
    task = asyncio.ensure_future(default_tools().run("exec", {"command": "echo up; read _ < release"}, ctx))
    os.mkfifo(workspace / "release")
    writer = -1
    try:
        await asyncio.wait_for(ready.wait(), WAIT_LIMIT)
        engine = found.engine_dirs.get("pids") or next(iter(found.engine_dirs.values()))
        session = engine / "s-s3"
        commands = [path for path in session.iterdir() if path.name.startswith("c-")]
        if "pids" in found.controllers:
            assert (session / "pids.max").read_text().strip() == "99"
            assert [(c / "pids.max").read_text().strip() for c in commands] == ["77"]
        writer = os.open(workspace / "release", os.O_RDWR)
        os.write(writer, b"go\n")
        result = await asyncio.wait_for(task, WAIT_LIMIT)
    finally:
        task.cancel()
        if writer >= 0:
            os.close(writer)
    assert result.output.endswith("[exit code 0]")
    assert await _groups_gone(found.engine_dirs.values())


async def _groups_gone(engine_dirs: Iterable[Path]) -> bool:
    """Wait (bounded) until the engine groups hold no session or command group (bubblewrap may exit a few
    milliseconds before its namespace's last process, cgroups.py); says whether that happened in time."""
    deadline = asyncio.get_running_loop().time() + WAIT_LIMIT
    while any(path.name.startswith(("c-", "s-")) for base in engine_dirs for path in base.iterdir()):
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


async def test_a_command_cannot_lift_its_own_limits(workspace: Path) -> None:
    """Even as root: the cgroup file system is read-only in the sandbox (and a cgroup namespace shows the command's
    group as the root), no capability is left to raise a hard rlimit or to mount a hierarchy of its own."""
    found = hierarchy()
    controllers = [str(found.engine_dirs[c].parent) for c in found.controllers] if found is not None else []
    moves = "; ".join(f"(echo 0 > {d}/cgroup.procs) 2>/dev/null || echo refused {d}" for d in controllers)
    script = (
        f"{moves or 'true'}; ulimit -t unlimited 2>/dev/null || echo refused cpu; ulimit -f unlimited 2>/dev/null "
        "|| echo refused file; mount -t tmpfs none /mnt 2>/dev/null || echo refused mount; "
        'echo "cpu $(ulimit -t) file $(ulimit -f)"'
    )
    result = await _exec(workspace, script, cpu_seconds=7, file_bytes=1 * MiB)
    lines = result.output.splitlines()
    assert lines[: len(controllers)] == [f"refused {d}" for d in controllers]
    assert lines[len(controllers) :] == [
        "refused cpu",
        "refused file",
        "refused mount",
        "cpu 7 file 2048",  # 1 MiB in 512-byte blocks
        "[exit code 0]",
    ]


async def test_a_refused_limits_config_runs_nothing(workspace: Path) -> None:
    """A bad sandbox.json makes every exec fail with its sentence (engine/sandbox_file.py): nothing runs, in
    either mode, under limits the user did not mean."""
    refusal = "the command was not run: sandbox.json is invalid (…)"
    for mode in ("sandboxed", "unsandboxed"):
        policy = SandboxPolicy(mode=mode, limits=ExecLimits(refused=refusal))
        result = await default_tools().run("exec", {"command": "touch ran"}, make_ctx(workspace, sandbox=policy))
        assert (result.output, result.is_error) == (refusal, True)
    assert not (workspace / "ran").exists()


NOBODY = 65534
AS_NOBODY = """
import asyncio, json, sys
from pathlib import Path
from omniagent.engine.tools import default_tools
from omniagent.engine.tools.context import ToolContext
from omniagent.sandbox import ExecLimits, SandboxPolicy
from omniagent.sandbox.cgroups import hierarchy

async def main():
    workspace, commands = Path(sys.argv[1]), json.loads(sys.argv[2])
    told = {"hierarchy": hierarchy() is not None}
    for name, command, limits in commands:
        policy = SandboxPolicy(mode="sandboxed", limits=ExecLimits(**limits))
        context = ToolContext.for_workspace(workspace, sandbox=policy)
        result = await default_tools().run("exec", {"command": command, "timeout": 20}, context)
        told[name] = result.output
    print(json.dumps(told))

asyncio.run(main())
"""


@pytest.fixture
def nobody_workspace() -> Iterator[Path]:
    """A workspace `nobody` owns, in a folder it can reach."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp"))
    folder.chmod(0o755)
    workspace = folder / "ws"
    workspace.mkdir()
    os.chown(workspace, NOBODY, NOBODY)
    try:
        yield workspace
    finally:
        shutil.rmtree(folder)


@pytest.fixture
def reachable_by_nobody() -> Iterator[None]:
    """Every folder above this interpreter and its import path traversable by others while the test runs, then put
    back: a checkout in a private folder (`mktemp -d` makes them 0700) is otherwise out of `nobody`'s reach."""
    paths = [Path(sys.executable), *(Path(p) for p in sys.path if p and Path(p).exists())]
    ancestors = {a for path in paths for a in (*path.parents, *path.resolve().parents)}
    changed: list[tuple[Path, int]] = []
    for folder in sorted(ancestors, key=lambda p: len(p.parts)):
        mode = stat.S_IMODE(folder.stat().st_mode)
        if not mode & stat.S_IXOTH:
            folder.chmod(mode | stat.S_IXOTH)
            changed.append((folder, mode))
    try:
        yield
    finally:
        for folder, mode in reversed(changed):
            folder.chmod(mode)


async def _count_with_marker(marker: str, count: int) -> bool:
    """Wait (bounded) until `count` processes carry `marker`: a sleeper caught in its exec from setpriv to sleep
    shows an empty command line for an instant (that read 99 of 100 once)."""
    deadline = asyncio.get_running_loop().time() + 10.0
    while len(_with_marker(marker)) != count:
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


@pytest.fixture
def nobody_processes() -> Iterator[str]:
    """100 processes of `nobody` outside any sandbox, for as long as the test runs; yields their marker."""
    marker = "44.6692"
    sleepers = [
        subprocess.Popen(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "sleep", marker])
        for _ in range(100)
    ]
    try:
        yield marker
    finally:
        for proc in sleepers:
            proc.kill()
            proc.wait()


@pytest.mark.skipif(not AS_ROOT, reason="needs root to run the engine's side as nobody (CI runs as root)")
@pytest.mark.usefixtures("reachable_by_nobody")
async def test_without_a_writable_cgroup_a_user_still_gets_rlimits(
    nobody_workspace: Path, nobody_processes: str
) -> None:
    """As a user other than root no cgroup here is writable, so the fallback holds: RLIMIT_NPROC set inside the
    sandbox's user namespace counts only the sandbox's processes (30 sleeps pass under `processes` 64 although
    `nobody` already runs 100 processes outside), 300 fail; RLIMIT_DATA refuses dd's 768 MiB buffer; and the model
    is told the limit each time."""
    commands = [
        ("thirty", "for i in $(seq 30); do sleep 1 & done; echo thirty started", {"processes": 64}),
        ("many", "for i in $(seq 300); do sleep 1 & done; echo all started", {"processes": 64}),
        ("memory", "dd if=/dev/zero of=/dev/null bs=768M count=1", {"memory_bytes": 256 * MiB}),
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "HOME": str(nobody_workspace)}
    argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable, "-c", AS_NOBODY]
    assert await _count_with_marker(nobody_processes, 100)
    done = await asyncio.to_thread(
        subprocess.run,
        [*argv, str(nobody_workspace), json.dumps(commands)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    told = json.loads(done.stdout)
    assert told["hierarchy"] is False
    assert told["thirty"].startswith("thirty started\n[exit code 0]"), told["thirty"]
    assert "all started" not in told["many"]
    assert (
        f"the command may run at most 64 processes and threads at once (the limit `processes`; {HOW})" in (told["many"])
    )
    assert "memory exhausted" in told["memory"]
    assert (
        f"each process of the command may use at most 256 MiB of memory (the limit `memory_mb`; {HOW})"
        in (told["memory"])
    )

"""The exec sandbox's system-call filter (issue 22; docs/security.md, "A hostile model"): each refused family tried by
a real command in the real sandbox, the same command unsandboxed as the control, the work builds do still working
inside, the 32-bit ABIs, every rule of the table against the kernel, and a machine without libseccomp."""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from omniagent.engine.tools import ToolResult, default_tools
from omniagent.sandbox import UNSANDBOXED, SandboxPolicy
from omniagent.sandbox.seccomp import RULES, Rule, filter_program

from .conftest import make_ctx

SANDBOXED = SandboxPolicy(mode="sandboxed")
REFUSED = "Operation not permitted"
# The interpreter itself, not a venv's link to it (a venv under /tmp would be under the sandbox's private /tmp).
PYTHON = os.path.realpath(sys.executable)
X86_64 = platform.machine() == "x86_64"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the control needs root's capabilities; CI runs as root")

# Tries one thing and prints `<probe>: ok` or `<probe>: <the error's text>`; run as `python probe.py NAME [ARG]`.
PROBE = r"""
import ctypes, mmap, os, socket, sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
seccomp = ctypes.CDLL("libseccomp.so.2")
seccomp.seccomp_syscall_resolve_name.argtypes = (ctypes.c_char_p,)


def nr(name):
    return seccomp.seccomp_syscall_resolve_name(name.encode())


def report(name, rc):
    print(f"{name}: " + ("ok" if rc >= 0 else os.strerror(ctypes.get_errno())))


def call32(number, a, b):
    # push rbx; mov eax, number; mov ebx, a; mov ecx, b; xor edx, edx; int 0x80; pop rbx; ret
    code = (b"\x53\xb8" + number.to_bytes(4, "little") + b"\xbb" + a.to_bytes(4, "little") + b"\xb9"
            + b.to_bytes(4, "little") + b"\x31\xd2\xcd\x80\x5b\xc3")
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    rc = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))()
    return "ok" if rc >= 0 else os.strerror(-rc)


probe = sys.argv[1]
try:
    if probe == "unix_socket":
        socket.socket(socket.AF_UNIX).close()
        print("unix_socket: ok")
    elif probe == "connect":
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(sys.argv[2].replace("@", "\0", 1))
            print("connect: ok", s.recv(100).decode())
    elif probe == "socketpair":
        a, b = socket.socketpair()
        a.sendall(b"through the pair")
        print("socketpair: ok", b.recv(100).decode())
    elif probe == "traceme":
        report(probe, libc.ptrace(0, 0, 0, 0))
    elif probe == "vm_readv":
        buf = ctypes.create_string_buffer(b"secret", 8)
        iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 8)
        report(probe, libc.process_vm_readv(os.getpid(), iov, 1, iov, 1, 0))
    elif probe == "clone_newuser":
        pid = libc.syscall(nr("clone"), 0x10000000 | 17, 0, 0, 0, 0)  # CLONE_NEWUSER | SIGCHLD
        if pid == 0:
            os._exit(0)
        if pid > 0:
            os.waitpid(pid, 0)
        report(probe, pid)
    elif probe == "clone3":
        report(probe, libc.syscall(nr("clone3"), 0, 0))
    elif probe == "keyctl":
        report(probe, libc.syscall(nr("keyctl"), 0, -3, 0))  # KEYCTL_GET_KEYRING_ID, the session keyring
    elif probe == "io_uring":
        report(probe, libc.syscall(nr("io_uring_setup"), 1, ctypes.create_string_buffer(120)))
    elif probe == "bpf":
        report(probe, libc.syscall(nr("bpf"), 0, 0, 0))
    elif probe == "int80":
        print("int80 socket(AF_UNIX):", call32(359, 1, 1))
        print("int80 unshare(CLONE_NEWUSER):", call32(310, 0x10000000, 0))
        print("int80 socketcall(SYS_SOCKET):", call32(102, 1, 0))
    else:
        raise SystemExit(f"no probe {probe}")
except OSError as exc:
    print(f"{probe}: {exc.strerror}")
"""


async def _exec(workspace: Path, command: str, policy: SandboxPolicy = SANDBOXED) -> ToolResult:
    return await default_tools().run("exec", {"command": command}, make_ctx(workspace, sandbox=policy))


async def _probe(workspace: Path, *args: str, policy: SandboxPolicy = SANDBOXED) -> str:
    """What the probe printed for `args`, sandboxed unless told."""
    (workspace / "probe.py").write_text(PROBE)
    result = await _exec(workspace, " ".join([PYTHON, "probe.py", *args]), policy)
    return result.output


@pytest.fixture
def host_dir() -> Iterator[Path]:
    """A folder of the host's that the sandbox shows (read-only): not under /tmp, which the sandbox replaces."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


async def test_a_command_cannot_create_a_unix_socket_but_a_socketpair_works(workspace: Path) -> None:
    """Our choice (as Claude Code's sandbox): socket(AF_UNIX) is refused; an anonymous pair reaches nothing outside
    and stays, since build tools use them to talk to their own children."""
    assert (await _probe(workspace, "unix_socket")).startswith(f"unix_socket: {REFUSED}\n")
    assert (await _probe(workspace, "socketpair")).startswith("socketpair: ok through the pair\n[exit code 0]")
    assert (await _probe(workspace, "unix_socket", policy=UNSANDBOXED)).startswith("unix_socket: ok\n")


async def _serve_unix(path: str, accepted: list[str]) -> asyncio.Server:
    async def greet(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(path)
        writer.write(b"host service")
        await writer.drain()
        writer.close()

    return await asyncio.start_unix_server(greet, path)


async def test_a_host_unix_socket_in_a_visible_folder_cannot_be_reached(workspace: Path, host_dir: Path) -> None:
    """Issue 22: the read-only root shows the host's socket files (agents, daemons, editors under HOME), and a
    socket file is reached without any network, so the network namespace does not stop it. Sandboxed, the command
    cannot connect and the service sees nothing; unsandboxed, the same command talks to it."""
    path = str(host_dir / "service.sock")
    accepted: list[str] = []
    async with await _serve_unix(path, accepted):
        sandboxed = await _probe(workspace, "connect", path)
        assert sandboxed.startswith(f"connect: {REFUSED}\n"), sandboxed
        assert accepted == []
        unsandboxed = await _probe(workspace, "connect", path, policy=UNSANDBOXED)
        assert unsandboxed.startswith("connect: ok host service\n"), unsandboxed
        assert accepted == [path]


async def test_a_host_abstract_socket_cannot_be_reached_when_the_network_is_shared(workspace: Path) -> None:
    """Issue 22: abstract Unix sockets (D-Bus, X11, many desktop services) live in the network namespace, so a
    session that turns the network on would share them with the host; they stay out of reach."""
    name = f"@omniagent-test-{uuid.uuid4().hex}"
    accepted: list[str] = []
    async with await _serve_unix(name.replace("@", "\0", 1), accepted):
        networked = await _probe(workspace, "connect", name, policy=SandboxPolicy(mode="sandboxed", network=True))
        assert networked.startswith(f"connect: {REFUSED}\n"), networked
        assert accepted == []
        unsandboxed = await _probe(workspace, "connect", name, policy=UNSANDBOXED)
        assert unsandboxed.startswith("connect: ok host service\n"), unsandboxed


async def test_no_new_namespaces_in_the_sandbox(workspace: Path) -> None:
    """Issue 22: a new user namespace would give the command every capability back. `unshare -U` and `unshare -r`
    are refused, clone(CLONE_NEWUSER) too, and clone3 answers ENOSYS so the C library falls back to clone; outside
    the sandbox the same commands create namespaces."""
    result = await _exec(workspace, "unshare -U true; unshare -r true")
    assert result.output.count(f"unshare: unshare failed: {REFUSED}") == 2, result.output
    assert (await _probe(workspace, "clone_newuser")).startswith(f"clone_newuser: {REFUSED}\n")
    assert (await _probe(workspace, "clone3")).startswith("clone3: Function not implemented\n")
    control = await _exec(workspace, "unshare -U true && unshare -r true && echo made", UNSANDBOXED)
    assert control.output == "made\n[exit code 0]"
    assert (await _probe(workspace, "clone_newuser", policy=UNSANDBOXED)).startswith("clone_newuser: ok\n")
    # clone3(NULL, 0) reaches the kernel outside, which finds the arguments too short.
    assert (await _probe(workspace, "clone3", policy=UNSANDBOXED)).startswith("clone3: Invalid argument\n")


async def test_the_sandbox_is_a_user_namespace_of_its_own(workspace: Path) -> None:
    """Issue 22: bubblewrap's `--disable-userns` needs the sandbox in a user namespace of its own, in which the
    kernel then allows no other (a second wall behind the filter, which refuses the calls first). As root that
    namespace maps root alone; the host's maps every uid."""
    inside = (await _exec(workspace, "cat /proc/self/uid_map")).output.split()
    assert inside[2:] == ["1", "[exit", "code", "0]"], inside
    outside = (await _exec(workspace, "cat /proc/self/uid_map", UNSANDBOXED)).output.split()
    assert outside[2] != "1", outside


async def test_no_tracing_in_the_sandbox(workspace: Path) -> None:
    """Issue 22: ptrace and process_vm_readv are refused, even on the command's own processes (gdb and strace do
    not work in the sandbox); outside, the same calls succeed."""
    for probe in ("traceme", "vm_readv"):
        assert (await _probe(workspace, probe)).startswith(f"{probe}: {REFUSED}\n")
        assert (await _probe(workspace, probe, policy=UNSANDBOXED)).startswith(f"{probe}: ok\n")
    strace = await _exec(workspace, "strace -o /dev/null true")
    assert strace.is_error and REFUSED in strace.output, strace.output


async def test_kernel_interfaces_no_build_needs_are_refused(workspace: Path) -> None:
    """Issue 22: the session keyring (shared with the host: the kernel's keyrings have no namespace), io_uring
    (socket and open operations past the filter) and bpf are refused in the sandbox, and reachable outside it
    (bpf there reaches the kernel, which finds the request empty)."""
    for probe in ("keyctl", "io_uring", "bpf"):
        assert (await _probe(workspace, probe)).startswith(f"{probe}: {REFUSED}\n")
    assert (await _probe(workspace, "keyctl", policy=UNSANDBOXED)).startswith("keyctl: ok\n")
    assert (await _probe(workspace, "io_uring", policy=UNSANDBOXED)).startswith("io_uring: ok\n")
    assert REFUSED not in await _probe(workspace, "bpf", policy=UNSANDBOXED)


@pytest.mark.skipif(not X86_64, reason="the 32-bit x86 ABI exists on x86-64 only; CI is x86-64")
async def test_the_32_bit_abi_is_no_way_around_the_filter(workspace: Path) -> None:
    """Issue 22: a 64-bit process can make 32-bit calls (`int 0x80`), with their own numbers; they meet the same
    rules, and socketcall(SYS_SOCKET), whose arguments are in memory the filter cannot read, is refused for every
    kind of socket. Outside the sandbox the same calls succeed."""
    sandboxed = await _probe(workspace, "int80")
    assert sandboxed.splitlines()[:3] == [
        f"int80 socket(AF_UNIX): {REFUSED}",
        f"int80 unshare(CLONE_NEWUSER): {REFUSED}",
        f"int80 socketcall(SYS_SOCKET): {REFUSED}",
    ]
    unsandboxed = await _probe(workspace, "int80", policy=UNSANDBOXED)
    assert unsandboxed.splitlines()[:2] == ["int80 socket(AF_UNIX): ok", "int80 unshare(CLONE_NEWUSER): ok"]
    # socketcall with a NULL argument block reaches the kernel, which cannot read it.
    assert unsandboxed.splitlines()[2] == "int80 socketcall(SYS_SOCKET): Bad address"


WORK = """
import concurrent.futures, multiprocessing, socket, subprocess, threading

if __name__ == "__main__":
    thread = threading.Thread(target=print, args=("thread",))
    thread.start()
    thread.join()
    print(subprocess.run(["echo", "child"], capture_output=True, text=True, check=True).stdout.strip())
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        print(pool.map(abs, [-1, -2]))
    with concurrent.futures.ProcessPoolExecutor(2) as executor:
        print(executor.submit(abs, -3).result())
    socket.socket(socket.AF_INET).close()
    print("inet")
"""


async def test_what_builds_do_still_works_in_the_sandbox(workspace: Path) -> None:
    """Issue 22: the filter keeps git, the C compiler, Python (threads, subprocesses, process pools, which talk
    over pipes and socket pairs; inet sockets) and shell pipelines working."""
    (workspace / "work.py").write_text(WORK)
    (workspace / "m.c").write_text("int main(void) { return 0; }\n")
    script = (
        "git init -q repo && git -C repo config user.email a@b.c && git -C repo config user.name a && "
        "echo hi > repo/f && git -C repo add f && git -C repo commit -qm first && git -C repo log --format=%s && "
        f"cc m.c -o m && ./m && echo compiled && {PYTHON} work.py && seq 1 100 | sort -rn | head -n 1"
    )
    result = await _exec(workspace, script)
    assert result.output == "first\ncompiled\nthread\nchild\n[1, 2]\n3\ninet\n100\n[exit code 0]", result.output


# Arguments for each refused call that are harmless when the call reaches the kernel: a bad descriptor, a path that
# does not exist, a NULL the kernel cannot read, a flag it rejects (never a real target). A rule's own bit is ORed in.
HARMLESS_ARGS: dict[str, tuple[int | str, ...]] = {
    "clone": (0x00010000, 0, 0, 0, 0),  # CLONE_THREAD without CLONE_SIGHAND: rejected before anything is made
    "unshare": (0x1,),  # a bit unshare does not take
    "clone3": (0, 0),
    "setns": (-1, 0),
    "ptrace": (16, 0x3FFFFFFF),  # PTRACE_ATTACH to no process
    "process_vm_readv": (0, 0, 0, 0, 0, 1),  # a flag that does not exist
    "process_vm_writev": (0, 0, 0, 0, 0, 1),
    "pidfd_getfd": (-1, 0, 0),
    "socket": (0, 1, 0),
    "io_uring_setup": (0, 0),
    "io_uring_enter": (-1, 0, 0, 0, 0, 0),
    "io_uring_register": (-1, 0, 0, 0),
    "bpf": (-1, 0, 0),
    "perf_event_open": (0, 0, -1, -1, 0),
    "userfaultfd": (0x2,),
    "lookup_dcookie": (0, 0, 0),
    "syslog": (-1, 0, 0),
    "keyctl": (-1, 0, 0, 0, 0),
    "add_key": (0, 0, 0, 0, 0),
    "request_key": (0, 0, 0, 0),
    "name_to_handle_at": (-1, 0, 0, 0, 0),
    "open_by_handle_at": (-1, 0, 0),
    "mount": (0, "/nonexistent-omniagent", 0, 0, 0),
    "umount2": ("/nonexistent-omniagent", 0),
    "pivot_root": ("/nonexistent-omniagent", "/nonexistent-omniagent"),
    "move_mount": (-1, 0, -1, 0, 0),
    "open_tree": (-1, 0, 0),
    "fsopen": (0, 0),
    "fsconfig": (-1, 0, 0, 0, 0),
    "fsmount": (-1, 0, 0),
    "fspick": (-1, 0, 0),
    "mount_setattr": (-1, 0, 0, 0, 0),
    "kexec_load": (0, 0, 0, 0xDEAD0000),  # an architecture that does not exist
    "kexec_file_load": (-1, -1, 0, 0, 0xDEAD0000),
    "reboot": (0, 0, 0, 0),  # no magic numbers
    "init_module": (0, 0, 0),
    "finit_module": (-1, 0, 0),
    "delete_module": (0, 0),
    "swapon": ("/nonexistent-omniagent", 0),
    "swapoff": ("/nonexistent-omniagent",),
    "acct": ("/nonexistent-omniagent",),
    "quotactl": (0, 0, 0, 0),
    "quotactl_fd": (-1, 0, 0, 0),
    "settimeofday": (0, 0),  # sets nothing
    "clock_settime": (-1, 0),
    "iopl": (4,),
    "ioperm": (0x10000, 1, 0),
    "personality": (0,),
    "ioctl": (-1, 0, 0),
}

# Loads the program on argv[2] (when argv[1] is "filtered") and makes each call of the JSON on stdin; prints the
# errno each got (0: it succeeded).
FILTER_PROBE = r"""
import ctypes, json, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
if sys.argv[1] == "filtered":
    class Prog(ctypes.Structure):
        _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))
    program = open(sys.argv[2], "rb").read()
    buf = ctypes.create_string_buffer(program, len(program))
    prog = Prog(len(program) // 8, ctypes.addressof(buf))
    assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
    assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
found = {}
for label, (number, *args) in json.load(sys.stdin).items():
    ctypes.set_errno(0)
    cargs = [ctypes.c_char_p(a.encode()) if isinstance(a, str) else ctypes.c_long(a) for a in args]
    rc = libc.syscall(ctypes.c_long(number), *cargs)
    found[label] = ctypes.get_errno() if rc == -1 else 0
print(json.dumps(found))
"""


def _native_number(name: str) -> int:
    lib = ctypes.CDLL("libseccomp.so.2")
    lib.seccomp_syscall_resolve_name.argtypes = (ctypes.c_char_p,)
    return int(lib.seccomp_syscall_resolve_name(name.encode()))


def _call(rule: Rule, number: int, high_half: bool = False) -> list[int | str]:
    args: list[int | str] = list(HARMLESS_ARGS[rule.syscall])
    if rule.arg is not None:
        base = args[rule.arg]
        assert isinstance(base, int)
        args[rule.arg] = base | rule.value | (1 << 32 if high_half else 0)
    return [number, *args]


def _run_calls(calls: dict[str, list[int | str]], program: Path | None) -> dict[str, int]:
    argv = [sys.executable, "-c", FILTER_PROBE, "filtered" if program else "plain", str(program)]
    done = subprocess.run(argv, input=json.dumps(calls), capture_output=True, text=True, timeout=60, check=True)
    found: dict[str, int] = json.loads(done.stdout)
    return found


@needs_root
def test_every_rule_of_the_filter_refuses_its_call_and_only_through_the_filter(tmp_path: Path) -> None:
    """Issue 22, rule by rule: each refused call made with harmless arguments (a bad descriptor, a missing path, a
    rejected flag) gets the rule's errno from a process that loaded the filter, and a different answer from the
    kernel without it (as root, where no capability check can answer EPERM first). A rule on an `int` argument
    also holds with the high half of the register set, which the kernel ignores (the flatpak TIOCSTI bypass)."""
    program = tmp_path / "filter.bpf"
    program.write_bytes(filter_program())
    calls: dict[str, list[int | str]] = {}
    expected: dict[str, int] = {}
    for index, rule in enumerate(RULES):
        number = _native_number(rule.syscall)
        assert number != -1, f"libseccomp does not know {rule.syscall}"
        if number < 0:
            continue  # a call of another ABI only (vm86, umount on 32-bit x86)
        calls[f"{index}:{rule.syscall}"] = _call(rule, number)
        expected[f"{index}:{rule.syscall}"] = rule.errno
        if rule.arg is not None and rule.mask == 0xFFFFFFFF:
            calls[f"{index}:{rule.syscall}:high"] = _call(rule, number, high_half=True)
            expected[f"{index}:{rule.syscall}:high"] = rule.errno
    assert set(HARMLESS_ARGS) <= {rule.syscall for rule in RULES}  # no stale entry
    assert _run_calls(calls, program) == expected
    plain = _run_calls(calls, None)
    assert {label: errno for label, errno in plain.items() if errno == expected[label]} == {}


@pytest.mark.skipif(not X86_64, reason="the x32 ABI exists on x86-64 only; CI is x86-64")
def test_a_call_through_the_x32_abi_kills_the_process(tmp_path: Path) -> None:
    """Our choice: x32 (64-bit calls with 32-bit pointers, numbers with bit 30 set) is off in most kernels and
    no build here uses it, so the filter does not cover it and kills a process that tries it, rather than
    letting it past the rules. Without the filter the kernel answers (here: ENOSYS, or the call itself)."""
    program = tmp_path / "filter.bpf"
    program.write_bytes(filter_program())
    calls: dict[str, list[int | str]] = {"x32 getpid": [0x40000000 | _native_number("getpid")]}
    assert "x32 getpid" in _run_calls(calls, None)
    argv = [sys.executable, "-c", FILTER_PROBE, "filtered", str(program)]
    done = subprocess.run(argv, input=json.dumps(calls), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == -31  # SIGSYS
    assert done.stdout == ""


@needs_root
def test_without_libseccomp_the_sandbox_does_not_start_and_says_what_to_install(workspace: Path) -> None:
    """Issue 22: no silent run without the filter. In a mount namespace of its own, an engine whose libseccomp is
    covered by an empty file runs a sandboxed command: it does not run, and the model reads what to install."""
    loaded = ctypes.CDLL("libseccomp.so.2")
    assert loaded
    library = next(
        line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines() if "libseccomp.so" in line
    )
    engine = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from omniagent.engine.tools import default_tools\n"
        "from omniagent.sandbox import SandboxPolicy\n"
        "from tests.engine.tools.conftest import make_ctx\n"
        "ctx = make_ctx(Path(sys.argv[1]), sandbox=SandboxPolicy(mode='sandboxed'))\n"
        "result = asyncio.run(default_tools().run('exec', {'command': 'touch ran'}, ctx))\n"
        "print(result.is_error, result.output)\n"
    )
    script = 'mount --bind /dev/null "$1" && exec "$2" -c "$3" "$4"'
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": f"{root / 'src'}:{root}"}
    argv = ["unshare", "--mount", "sh", "-c", script, "sh", library, sys.executable, engine, str(workspace)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "True the command was not run: the exec sandbox's system-call filter needs libseccomp (libseccomp.so.2), "
        "which is not installed; install libseccomp (Debian/Ubuntu: `sudo apt-get install libseccomp2`"
    ), done.stdout
    assert not (workspace / "ran").exists()

"""The exec sandbox's system-call filter: which kernel calls a sandboxed command may not make (libseccomp).

The filter closes what the sandbox's namespaces and dropped capabilities leave open (docs/security.md): new
namespaces (a user namespace gives back every capability inside it), tracing or reading other processes, Unix
sockets (a socket file of the host's that the read-only root shows, or an abstract socket when the network is
shared, is reached without the network), and kernel interfaces no build needs that keep giving kernel exploits.
Every other call is allowed; a refused one fails with EPERM ("Operation not permitted"), except `clone3`, which
fails with ENOSYS so the C library falls back to `clone`, whose flags the filter can read (`clone3` keeps them in
memory, out of a filter's reach).

The program is compiled once per process (libseccomp through ctypes: its C API is stable and small, and no
maintained Python binding is on PyPI) and handed to bubblewrap for each command in a memfd (`bwrap --seccomp FD`),
which installs it last, right before the command's shell starts. Besides the machine's own system-call ABI the
filter covers the compatibility ABIs the kernel also accepts (32-bit x86 on x86-64, 32-bit Arm on arm64) with the
same rules, and kills a process that calls through any other: a 32-bit call is no way around it.

What this is not: the mounts and namespaces (command_line.py) nor the spawning (run.py). Unsandboxed commands are the
user's own shell and get no filter.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass

from omniagent.sandbox.errors import SandboxUnavailable

__all__ = ["LIBSECCOMP_INSTALL_HINT", "RULES", "Rule", "filter_fd", "filter_program"]

LIBSECCOMP_INSTALL_HINT = (
    "install libseccomp (Debian/Ubuntu: `sudo apt-get install libseccomp2`; Fedora: `sudo dnf install libseccomp`)"
)
LIBSECCOMP_SONAME = "libseccomp.so.2"
# 2.5.0 is the first release whose system-call tables know clone3, io_uring and the new mount API.
LIBSECCOMP_MINIMUM = (2, 5, 0)

# The low 32 bits of an argument: the kernel reads `int` and `unsigned int` arguments from them alone, so a
# comparison of all 64 bits could be dodged by setting the high half (the flatpak TIOCSTI bypass, CVE-2019-10063).
LOW_32 = 0xFFFFFFFF
AF_UNIX = 1
AF_VSOCK = 40
# clone()'s namespace flags (CLONE_NEWTIME is 0x80, which clone() reads as part of the exit signal: unshare only).
CLONE_NEW = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
CLONE_NEWTIME = 0x00000080
# personality() flags that turn off exploit mitigations for everything the process starts.
PERSONALITY_UNSAFE = {
    "READ_IMPLIES_EXEC": 0x0400000,  # every readable mapping executable: no NX
    "ADDR_NO_RANDOMIZE": 0x0040000,  # no ASLR
    "MMAP_PAGE_ZERO": 0x0100000,  # page 0 mapped: a kernel NULL dereference becomes exploitable
}
TIOCSTI = 0x5412  # push bytes into a terminal's input, as if typed
TIOCLINUX = 0x541C  # the Linux console's subcommands, including copy and paste (the same trick)


@dataclass(frozen=True, slots=True)
class Rule:
    """`syscall` fails with `errno`: always, or (with `arg`) when argument `arg` ANDed with `mask` equals `value`.

    A call matched by any rule is refused; `why` is the reason, for the reader of this table.
    """

    syscall: str
    why: str
    errno: int = errno.EPERM
    arg: int | None = None
    mask: int = LOW_32
    value: int = 0


def _always(names: Iterable[str], why: str) -> list[Rule]:
    return [Rule(name, why) for name in names]


def _any_flag(syscall: str, flags: dict[str, int], why: str, arg: int = 0) -> list[Rule]:
    """One rule per flag: the call is refused when any of `flags` is set in argument `arg`."""
    return [Rule(syscall, f"{why} ({name})", arg=arg, mask=bit, value=bit) for name, bit in flags.items()]


RULES: tuple[Rule, ...] = (
    # New namespaces: in a new user namespace the command would hold every capability again (and could then
    # mount over what the sandbox hides); the other namespace kinds need those capabilities or a user namespace.
    *_any_flag("clone", CLONE_NEW, "a new namespace"),
    *_any_flag("unshare", {**CLONE_NEW, "CLONE_NEWTIME": CLONE_NEWTIME}, "a new namespace"),
    Rule("clone3", "its flags are in memory the filter cannot read; libc then uses clone", errno=errno.ENOSYS),
    *_always(["setns"], "joining another namespace"),
    # Other processes: the PID namespace hides the host's, and these are refused even inside the sandbox
    # (on kernels before 4.8 a tracer could also rewrite a call after the filter had passed it).
    *_always(["ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd"], "reading or steering a process"),
    # Unix sockets: a socket file of the host's in a visible directory, or an abstract socket when the network is
    # shared, reaches a host service (an agent, a daemon, a desktop session) without the network. socketpair()
    # stays: an anonymous pair reaches nothing outside.
    Rule("socket", "a Unix socket could reach the host's services", arg=0, value=AF_UNIX),
    # VM sockets reach the hypervisor's host services (in WSL2 also the Windows side).
    Rule("socket", "a VM socket reaches the host outside the machine", arg=0, value=AF_VSOCK),
    # Asynchronous I/O that performs socket, connect and open operations without the calls this filter checks,
    # and a steady source of kernel exploits.
    *_always(["io_uring_setup", "io_uring_enter", "io_uring_register"], "io_uring bypasses the filter"),
    # Kernel interfaces no build needs, each a common step in kernel exploits or an information leak.
    *_always(["bpf"], "loading programs into the kernel"),
    *_always(["perf_event_open"], "kernel performance events (a leak and exploit surface)"),
    *_always(["userfaultfd"], "stalling the kernel mid-copy, the classic step in exploiting kernel races"),
    *_always(["lookup_dcookie"], "kernel profiling internals"),
    *_always(["syslog"], "the kernel log (addresses that defeat KASLR)"),
    # The kernel keyrings are not namespaced: the user's session keyring (Kerberos tickets, disk keys) is shared.
    *_always(["keyctl", "add_key", "request_key"], "the kernel keyrings are shared with the host"),
    # Opening a file by handle goes past the mounts that hide it (the "shocker" container escape).
    *_always(["name_to_handle_at", "open_by_handle_at"], "opening files past the sandbox's mounts"),
    # What follows needs a capability the sandbox drops; refused here as well, as a second wall.
    *_always(
        ["mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount"],
        "changing the mounts the sandbox is made of",
    ),
    *_always(["fspick", "mount_setattr"], "changing the mounts the sandbox is made of"),
    *_always(["kexec_load", "kexec_file_load", "reboot"], "replacing or restarting the kernel"),
    *_always(["init_module", "finit_module", "delete_module"], "loading or removing kernel modules"),
    *_always(["swapon", "swapoff", "acct", "quotactl", "quotactl_fd"], "host-wide administration"),
    *_always(["settimeofday", "clock_settime"], "setting the host's clock"),
    *_always(["iopl", "ioperm", "vm86", "vm86old"], "direct hardware port access and virtual 8086 mode"),
    # Only the flags: since Linux 4.1 the other exec domains are gone. libseccomp takes one comparison per argument
    # in a rule, so the query form personality(0xffffffff), which has every bit set, is refused too.
    *_any_flag("personality", PERSONALITY_UNSAFE, "turning off exploit mitigations"),
    Rule("ioctl", "typing into a terminal", arg=1, value=TIOCSTI),
    Rule("ioctl", "typing into a terminal", arg=1, value=TIOCLINUX),
)

# libseccomp's ABI (seccomp.h): actions, attributes, comparison operators.
_ACT_ALLOW = 0x7FFF0000
_ACT_KILL_PROCESS = 0x80000000
_ACT_ERRNO = 0x00050000
_ATTR_ACT_BADARCH = 2
_CMP_MASKED_EQ = 7
_NR_UNKNOWN = -1  # __NR_SCMP_ERROR: a name the installed libseccomp does not know
# The compatibility ABIs a 64-bit kernel also accepts, by native architecture (libseccomp's names).
_COMPAT_ARCHES = {"x86_64": ("x86",), "aarch64": ("arm",)}
# Where clone() keeps its flags: the first argument, except on s390, which swaps the first two.
_CLONE_FLAGS_ARG = {"s390": 1, "s390x": 1}


class _ArgCmp(ctypes.Structure):
    _fields_ = (
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    )


class _Version(ctypes.Structure):
    _fields_ = (("major", ctypes.c_uint), ("minor", ctypes.c_uint), ("micro", ctypes.c_uint))


def filter_fd() -> int:
    """A new memfd holding the compiled filter, positioned at its start, for one `bwrap --seccomp FD`.

    Each command gets its own: bubblewrap reads to the end, and a shared file's offset would race between
    commands started together. The caller closes it once the sandbox has started.

    Raises:
        SandboxUnavailable: libseccomp is missing or too old (the message says what to install).
    """
    program = filter_program()
    fd = os.memfd_create("omniagent-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


@functools.cache
def filter_program() -> bytes:
    """The filter as a BPF program (the bytes `bwrap --seccomp` reads), compiled on first use.

    Raises:
        SandboxUnavailable: libseccomp is missing or too old; not cached, so installing it needs no restart.
    """
    lib = _load()
    ctx = lib.seccomp_init(_ACT_ALLOW)
    if not ctx:
        raise _failure("seccomp_init", errno.ENOMEM)
    try:
        _check("seccomp_attr_set", lib.seccomp_attr_set(ctx, _ATTR_ACT_BADARCH, _ACT_KILL_PROCESS))
        native = _arch_name(lib, lib.seccomp_arch_native())
        for compat in _COMPAT_ARCHES.get(native, ()):
            _check("seccomp_arch_add", lib.seccomp_arch_add(ctx, lib.seccomp_arch_resolve_name(compat.encode())))
        for rule in RULES:
            _add(lib, ctx, rule, native)
        return _export(lib, ctx)
    finally:
        lib.seccomp_release(ctx)


def _load() -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL(LIBSECCOMP_SONAME)
    except OSError:
        raise SandboxUnavailable(
            f"the command was not run: the exec sandbox's system-call filter needs libseccomp "
            f"({LIBSECCOMP_SONAME}), which is not installed; {LIBSECCOMP_INSTALL_HINT}, "
            "or switch this session's sandbox option to unsandboxed"
        ) from None
    lib.seccomp_version.restype = ctypes.POINTER(_Version)
    lib.seccomp_version.argtypes = ()
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = (ctypes.c_uint32,)
    lib.seccomp_release.restype = None
    lib.seccomp_release.argtypes = (ctypes.c_void_p,)
    lib.seccomp_attr_set.restype = ctypes.c_int
    lib.seccomp_attr_set.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32)
    lib.seccomp_arch_native.restype = ctypes.c_uint32
    lib.seccomp_arch_native.argtypes = ()
    lib.seccomp_arch_resolve_name.restype = ctypes.c_uint32
    lib.seccomp_arch_resolve_name.argtypes = (ctypes.c_char_p,)
    lib.seccomp_arch_add.restype = ctypes.c_int
    lib.seccomp_arch_add.argtypes = (ctypes.c_void_p, ctypes.c_uint32)
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_syscall_resolve_name.argtypes = (ctypes.c_char_p,)
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = (
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    )
    lib.seccomp_export_bpf.restype = ctypes.c_int
    lib.seccomp_export_bpf.argtypes = (ctypes.c_void_p, ctypes.c_int)
    version = lib.seccomp_version().contents
    found = (version.major, version.minor, version.micro)
    if found < LIBSECCOMP_MINIMUM:
        raise SandboxUnavailable(
            f"the command was not run: the exec sandbox's system-call filter needs libseccomp "
            f"{'.'.join(map(str, LIBSECCOMP_MINIMUM))} or newer, and {'.'.join(map(str, found))} is installed; "
            "upgrade it, or switch this session's sandbox option to unsandboxed"
        )
    return lib


def _arch_name(lib: ctypes.CDLL, token: int) -> str:
    for name in ("x86_64", "aarch64", "s390", "s390x"):
        if lib.seccomp_arch_resolve_name(name.encode()) == token:
            return name
    return ""


def _add(lib: ctypes.CDLL, ctx: int, rule: Rule, native: str) -> None:
    number = lib.seccomp_syscall_resolve_name(rule.syscall.encode())
    if number == _NR_UNKNOWN:
        # Only calls newer than the oldest libseccomp accepted can be unknown (mount_setattr, quotactl_fd), and
        # those need a capability the sandbox drops.
        return
    arg = _CLONE_FLAGS_ARG.get(native, 0) if rule.syscall == "clone" else rule.arg
    action = _ACT_ERRNO | rule.errno
    if arg is None:
        _check(f"seccomp_rule_add({rule.syscall})", lib.seccomp_rule_add_array(ctx, action, number, 0, None))
        return
    compare = (_ArgCmp * 1)(_ArgCmp(arg, _CMP_MASKED_EQ, rule.mask, rule.value))
    _check(f"seccomp_rule_add({rule.syscall})", lib.seccomp_rule_add_array(ctx, action, number, 1, compare))


def _export(lib: ctypes.CDLL, ctx: int) -> bytes:
    fd = os.memfd_create("omniagent-seccomp-build", os.MFD_CLOEXEC)
    try:
        _check("seccomp_export_bpf", lib.seccomp_export_bpf(ctx, fd))
        size = os.lseek(fd, 0, os.SEEK_CUR)
        return os.pread(fd, size, 0)
    finally:
        os.close(fd)


def _check(call: str, rc: int) -> None:
    if rc < 0 and rc != -errno.EEXIST:
        raise _failure(call, -rc)


def _failure(call: str, code: int) -> SandboxUnavailable:
    return SandboxUnavailable(
        f"the command was not run: the exec sandbox's system-call filter could not be built "
        f"({call}: {os.strerror(code)}); switch this session's sandbox option to unsandboxed to run commands"
    )

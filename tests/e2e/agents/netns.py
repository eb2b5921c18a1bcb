"""Network isolation for real agents: a namespace holding only loopback, shared by one fake LLM and its agents.

How it works (docs/testing.md, "Isolation"):
- The fake LLM is started as `unshare -n -- python netns.py <fake_llm args>` (`unshare -rn` when not root, which
  adds a user namespace mapping us to root). This file, run as a script, brings `lo` up with one ioctl (no
  dependency on iproute2) and then runs `omniagent.testing.fake_llm` in that same process. The fake LLM's pid
  thus names the namespace: `/proc/<pid>/ns/net`.
- Each agent is launched through `nsenter --net=/proc/<pid>/ns/net -- agent …` (`nsenter -t <pid> -U -n
  --preserve-credentials` for the user-namespace variant). nsenter execs the agent in place, so the pid a client
  spawns is the agent's own pid; killing it kills the agent.
- Inside, only 127.0.0.1 exists: the agents reach the fake LLM and nothing else, whatever they try to phone.

`mode()` probes once which variant works. Neither working means the machine forbids namespaces; the tests then
skip saying so, except as root (CI), where that is an error.
"""

from __future__ import annotations

import fcntl
import functools
import os
import shutil
import socket
import struct
import subprocess
import sys
from typing import Literal

Mode = Literal["root", "user"]
# Seconds the probe may take (unshare + one ioctl).
PROBE_TIMEOUT = 10.0
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1


class NamespaceUnavailable(RuntimeError):
    """Neither `unshare -n` nor `unshare -rn` works here."""


def loopback_up() -> None:
    """Set IFF_UP on `lo` in the current network namespace (what `ip link set lo up` does)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


@functools.cache
def mode() -> Mode:
    """The working isolation variant. Raises NamespaceUnavailable with the reason."""
    unshare = shutil.which("unshare")
    if unshare is None or shutil.which("nsenter") is None:
        raise NamespaceUnavailable("unshare/nsenter (util-linux) are not on PATH")
    candidates: list[Mode] = ["root", "user"] if os.geteuid() == 0 else ["user"]
    errors = []
    for candidate in candidates:
        probe = [*unshare_argv(candidate), sys.executable, __file__, "--probe"]
        try:
            done = subprocess.run(probe, capture_output=True, text=True, timeout=PROBE_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            errors.append(f"{' '.join(probe[:2])}: {exc}")
            continue
        if done.returncode == 0:
            return candidate
        errors.append(f"{' '.join(probe[:2])}: {done.stderr.strip() or done.returncode}")
    raise NamespaceUnavailable("no network namespace available: " + "; ".join(errors))


def unshare_argv(variant: Mode) -> list[str]:
    """The prefix that starts a process in a fresh network namespace."""
    return ["unshare", "-n", "--"] if variant == "root" else ["unshare", "-rn", "--"]


def nsenter_argv(variant: Mode, holder_pid: int) -> list[str]:
    """The prefix that runs a command inside the namespace held by `holder_pid`."""
    if variant == "root":
        return ["nsenter", f"--net=/proc/{holder_pid}/ns/net", "--"]
    return ["nsenter", "-t", str(holder_pid), "-U", "-n", "--preserve-credentials", "--"]


def _main(argv: list[str]) -> int:
    loopback_up()
    if argv == ["--probe"]:
        return 0
    from omniagent.testing.fake_llm import main

    return main(argv)


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

"""The TCP sockets a process tree listens on, read from /proc as `ss -ltnp` would: each listening socket of the
tree's network namespace (`/proc/<pid>/net/tcp` and `tcp6`) matched by inode to the processes holding it."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

_LISTEN = "0A"  # the TCP state LISTEN in /proc/net/tcp


@dataclass(frozen=True, slots=True)
class Listening:
    pid: int
    name: str  # the process's comm (Ray sets it: gcs_server, raylet, ray::IDLE, ray::RuntimeEnv…)
    address: ipaddress.IPv4Address | ipaddress.IPv6Address
    port: int

    @property
    def loopback(self) -> bool:
        """Whether only this machine can reach it (`::ffff:127.0.0.1`, a dual-stack socket's IPv4 loopback, too)."""
        address = self.address
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            return address.ipv4_mapped.is_loopback
        return address.is_loopback


def process_tree(root: int) -> list[int]:
    """`root` and every process descended from it, as they are now."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:  # it has just exited
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def listening(root: int) -> list[Listening]:
    """Every TCP socket a process of `root`'s tree listens on, with the process holding it."""
    sockets = _listening_sockets(root)
    found: list[Listening] = []
    for pid in process_tree(root):
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:[") and (inode := int(target[8:-1])) in sockets:
                found.append(Listening(pid, name, *sockets[inode]))
    return found


def _listening_sockets(pid: int) -> dict[int, tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]]:
    sockets: dict[int, tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]] = {}
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != _LISTEN:
                continue
            address, port = fields[1].split(":")
            sockets[int(fields[9])] = (_address(address), int(port, 16))
    return sockets


def _address(hex_address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    # The kernel prints each 32-bit word in host order (little-endian here).
    raw = bytes.fromhex(hex_address)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return ipaddress.IPv4Address(words) if len(words) == 4 else ipaddress.IPv6Address(words)

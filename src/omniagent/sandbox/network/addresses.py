"""Which IP addresses a confined command's network may reach, and a host name resolved once to its addresses: the
rules the allowlist proxy (proxy.py) and the engine's `fetch` tool both apply, so they give one answer.

The caller connects to an address returned by `resolve` and passed by `address_refusal`, never to the name again,
so a DNS answer that changes between the check and the connection (DNS rebinding) cannot steer a connection to an
address that was not checked.

Public (globally routable) addresses are always allowed. Loopback, private ranges (RFC 1918, ULA, CGNAT
100.64/10, which tailnets use) are refused unless the session allows its private network. Link-local (cloud
metadata at 169.254.169.254), multicast, unspecified, reserved and documentation addresses are always refused.
An IPv4 address inside IPv6 (`::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`) is judged as the IPv4 address it carries.
`address_refusal`'s phrases are `fetch`'s; the proxy says the same in its own words.

What this is not: the name rules of the allowlist (allowlist.py), nor `fetch`'s own use (engine/tools/web).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket

__all__ = ["IPAddress", "address_refusal", "ip_literal", "resolve"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
# Examples in documents and benchmark ranges, never a real host: a fetch there is a model's mistake or a trick.
_EXAMPLES = tuple(
    ipaddress.ip_network(net)
    for net in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "198.18.0.0/15", "2001:db8::/32")
)


def _embedded(address: IPAddress) -> IPAddress:
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def address_refusal(address: IPAddress, *, allow_private: bool) -> str | None:
    """Why a fetch may not connect to `address` (what kind of address it is, as a phrase), or None when it may."""
    ip = _embedded(address)
    never = ip.is_link_local or ip.is_multicast or ip.is_unspecified or (ip.is_reserved and not ip.is_loopback)
    if not never and ip.is_global:
        return None
    private = ip.is_loopback or ip.is_private or (isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT)
    example = any(ip.version == net.version and ip in net for net in _EXAMPLES)
    if private and not never and not example:
        if allow_private:
            return None
        return "a private or loopback address, which fetch reaches only when the session allows its private network"
    return "a link-local, multicast, reserved or unspecified address, which fetch never connects to"


def ip_literal(host: str) -> IPAddress | None:
    """`host` as an IP address, when it is one."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


async def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address `host` resolves to, once, in resolver order without repeats (an IP literal is its own); empty
    when it does not resolve. Unchecked: the caller checks each with `address_refusal` before connecting to it."""
    literal = ip_literal(host)
    if literal is not None:
        return [literal]
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return []
    return list(dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos))

"""Where `fetch` may connect: a host name resolved once, every address checked, the checked ones returned.

The caller connects to an address returned here, never to the name again, so a DNS answer that changes between
the check and the connection (DNS rebinding) cannot steer a fetch to an address that was not checked.

Public (globally routable) addresses are always allowed. Loopback, private ranges (RFC 1918, ULA, CGNAT
100.64/10, which tailnets use) are refused unless the session allows its private network. Link-local (cloud
metadata at 169.254.169.254), multicast, unspecified, reserved and documentation addresses are always refused.
An IPv4 address inside IPv6 (`::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`) is judged as the IPv4 address it carries.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket

from omniagent.engine.tools.context import ToolError

__all__ = ["IPAddress", "address_refusal", "ip_literal", "resolve", "resolve_allowed"]

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


async def resolve_allowed(host: str, port: int, *, allow_private: bool) -> list[IPAddress]:
    """Every address `host` resolves to (once), in resolver order, when all of them are allowed.

    A name that resolves to any refused address is refused as a whole: mixing a public and a private answer is
    exactly what a rebinding attack does.

    Raises:
        ToolError: the name does not resolve, or an address it resolves to is refused.
    """
    found = await resolve(host, port)
    if not found:
        raise ToolError(f"the host {host} could not be resolved")
    for address in found:
        refusal = address_refusal(address, allow_private=allow_private)
        if refusal is not None:
            named = f"{address} is" if ip_literal(host) is not None else f"{host} resolves to {address},"
            raise ToolError(f"{named} {refusal}")
    return found

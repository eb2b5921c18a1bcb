"""Where `fetch` may connect: a host name resolved once, every address checked, the checked ones returned.

The rules are the sandbox's (omniagent.sandbox's `address_refusal`: the allowlist proxy checks the same way); this
module turns a refusal into the `fetch` call's error. The caller connects to an address returned here, never to the
name again, so a DNS answer that changes between the check and the connection (DNS rebinding) cannot steer a fetch
to an address that was not checked.
"""

from __future__ import annotations

from omniagent.engine.tools.context import ToolError
from omniagent.sandbox import IPAddress, address_refusal, ip_literal, resolve

__all__ = ["IPAddress", "resolve_allowed"]


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

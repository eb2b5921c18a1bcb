"""The `fetch` tool: GET one http(s) URL and return the page as readable text.

Rules (docs/engine.md, "Web fetch"):
- Only `http` and `https`; a URL carrying a user name or password is refused.
- Every hop (the URL and each redirect, at most `MAX_REDIRECTS`) resolves its host once and is checked
  (`addresses.py`); the request then goes to the checked address itself, with the host name in `Host` and in TLS
  (SNI and certificate check), so a second DNS answer can never take it elsewhere.
- Nothing of ours is sent: a fresh client per call, no environment (no proxy variables, no `.netrc`), no cookies
  kept between hops, only `user-agent` and `accept` headers. Provider keys never reach this module.
- Bounded: `fetch_timeout` seconds for the whole call, `fetch_max_bytes` of body read (the rest is never
  downloaded), `fetch_text_cap` characters of text returned; each cut is said in the result.
- HTML becomes readable text (`html_text.py`); other text types come back as they are; binary types are refused.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from omniagent._version import __version__
from omniagent.engine.tools.args import required_str
from omniagent.engine.tools.context import ToolContext, ToolError, ToolResult, guarded
from omniagent.engine.tools.web.addresses import IPAddress, resolve_allowed
from omniagent.engine.tools.web.html_text import html_to_text

__all__ = ["FetchTool"]

MAX_REDIRECTS = 5
CONNECT_TIMEOUT = 10.0  # seconds to open one connection (the whole call is bounded by `fetch_timeout`)
USER_AGENT = f"omniagent/{__version__} (fetch tool)"
_HTML = frozenset({"text/html", "application/xhtml+xml"})
_TEXT = frozenset(
    {
        "application/json", "application/xml", "application/javascript", "application/x-javascript",
        "application/yaml", "application/x-yaml", "application/toml", "application/x-sh", "application/sql",
        "application/graphql", "application/x-ndjson",
    }
)  # fmt: skip
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_META_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
# Bytes of a body looked at to tell text from binary and to find a `<meta charset>`.
_SNIFF_BYTES = 4096


@dataclass(frozen=True, slots=True)
class _Page:
    url: httpx.URL
    status: int
    reason: str
    media_type: str
    charset: str | None
    body: bytes
    cut: bool  # the body went on past `fetch_max_bytes`


class FetchTool:
    """Fetch a web page over http(s) and return its text."""

    name = "fetch"
    description = (
        "Fetch a web page (http or https URL) and return it as readable text: HTML is converted to plain text "
        "with links as [text](url); JSON, XML and other text come back as they are. Large pages are cut, with a "
        "notice. Only public addresses are reachable unless the session allows its private network."
    )
    input_schema: Mapping[str, object] = {
        "type": "object",
        "properties": {"url": {"type": "string", "description": "The http:// or https:// URL to fetch."}},
        "required": ["url"],
    }

    async def run(self, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        async def body() -> ToolResult:
            url = _checked_url(required_str(args, "url"))
            try:
                async with asyncio.timeout(ctx.limits.fetch_timeout):
                    page = await _get(url, ctx)
            except TimeoutError:
                raise ToolError(f"fetching {url} took longer than {ctx.limits.fetch_timeout:g} seconds") from None
            return _result(page, ctx)

        return await guarded(ctx.root, body)


def _checked_url(raw: str, base: httpx.URL | None = None) -> httpx.URL:
    """The URL to request (`raw` resolved against `base` for a redirect), or a refusal."""
    try:
        url = base.join(raw) if base is not None else httpx.URL(raw.strip())
    except (httpx.InvalidURL, ValueError) as exc:
        raise ToolError(f"{raw!r} is not a valid URL") from exc
    if url.scheme not in ("http", "https"):
        raise ToolError(f"only http and https URLs can be fetched, not {url.scheme or 'this one'}: {raw}")
    if not url.raw_host:
        raise ToolError(f"the URL {raw} has no host")
    if url.userinfo:
        raise ToolError("URLs with a user name or password are not fetched")
    return url.copy_with(fragment=None)


async def _get(url: httpx.URL, ctx: ToolContext) -> _Page:
    timeout = httpx.Timeout(ctx.limits.fetch_timeout, connect=CONNECT_TIMEOUT)
    # identity: a compressed body could inflate far past `fetch_max_bytes` inside one decoded chunk.
    headers = {
        "user-agent": USER_AGENT,
        "accept": "text/html,text/plain;q=0.9,*/*;q=0.5",
        "accept-encoding": "identity",
    }
    # No kept-alive connection: a pooled TLS connection to the same address must not serve another host name.
    limits = httpx.Limits(max_keepalive_connections=0)
    async with httpx.AsyncClient(
        trust_env=False, follow_redirects=False, timeout=timeout, headers=headers, limits=limits
    ) as client:
        for _hop in range(MAX_REDIRECTS + 1):
            host = url.raw_host.decode("ascii")
            port = url.port or (443 if url.scheme == "https" else 80)
            addresses = await resolve_allowed(host, port, allow_private=ctx.private_network)
            page, location = await _request(client, url, addresses, ctx)
            client.cookies.clear()  # a hop's cookies are never sent on
            if location is None:
                return page
            url = _checked_url(location, base=url)
    raise ToolError(f"the page redirected more than {MAX_REDIRECTS} times")


async def _request(
    client: httpx.AsyncClient, url: httpx.URL, addresses: list[IPAddress], ctx: ToolContext
) -> tuple[_Page, str | None]:
    """One GET to the first checked address that accepts a connection; the page, or a redirect's location."""
    host = url.raw_host.decode("ascii")
    extensions = {"sni_hostname": host} if url.scheme == "https" else {}
    failure: httpx.HTTPError | None = None
    for address in addresses:
        target = url.copy_with(host=str(address))
        request = client.build_request("GET", target, headers={"host": url.netloc.decode("ascii")})
        request.extensions.update(extensions)
        try:
            response = await client.send(request, stream=True)
        except httpx.ConnectError as exc:
            failure = exc
            continue
        except httpx.HTTPError as exc:
            raise ToolError(_failure_sentence(host, exc)) from exc
        try:
            location = response.headers.get("location")
            if response.status_code in _REDIRECTS and location:
                return _page(url, response, b"", cut=False), location
            body, cut = await _read(response, ctx.limits.fetch_max_bytes)
        except httpx.HTTPError as exc:
            raise ToolError(_failure_sentence(host, exc)) from exc
        finally:
            await response.aclose()
        return _page(url, response, body, cut), None
    assert failure is not None, "resolve_allowed returns at least one address"
    raise ToolError(_failure_sentence(host, failure))


async def _read(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(chunks)[:limit], True
    return b"".join(chunks), False


def _page(url: httpx.URL, response: httpx.Response, body: bytes, cut: bool) -> _Page:
    content_type = response.headers.get("content-type", "")
    media_type = content_type.split(";", 1)[0].strip().lower()
    return _Page(url, response.status_code, response.reason_phrase, media_type, response.charset_encoding, body, cut)


def _failure_sentence(host: str, exc: httpx.HTTPError) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return f"{host} did not answer in time"
    if "CERTIFICATE_VERIFY_FAILED" in str(exc):
        return f"the TLS certificate of {host} is not valid"
    if isinstance(exc, httpx.ConnectError):
        return f"could not connect to {host}"
    return f"the connection to {host} failed"


def _result(page: _Page, ctx: ToolContext) -> ToolResult:
    kind = _kind(page)
    if kind is None:
        shown = page.media_type or "binary data"
        return ToolResult.error(f"{page.url} is {shown}, which fetch does not read: it reads HTML and text")
    text = _decode(page)
    if kind == "html":
        text = html_to_text(text, str(page.url))
    notes: list[str] = []
    if page.cut:
        notes.append(f"the page is larger than {ctx.limits.fetch_max_bytes} bytes; only the first ones were read")
    cap = ctx.limits.fetch_text_cap
    if len(text) > cap:
        notes.append(f"the text is cut at {cap} of {len(text)} characters")
        text = text[:cap]
    head = f"{page.url} ({page.status} {page.reason}, {page.media_type or 'no content type'})"
    output = "\n\n".join([head, text, *(f"[{note}]" for note in notes)])
    return ToolResult(output, is_error=page.status >= 400)


def _kind(page: _Page) -> str | None:
    """ "html", "text", or None for a body fetch does not read."""
    media = page.media_type
    if media in _HTML:
        return "html"
    if media.startswith("text/") or media in _TEXT or media.endswith(("+json", "+xml")):
        return "text"
    if media and media != "application/octet-stream":
        return None
    head = page.body[:_SNIFF_BYTES]
    if b"\x00" in head:
        return None
    return "html" if head.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html")) else "text"


def _decode(page: _Page) -> str:
    charset = page.charset
    if charset is None and (found := _META_CHARSET.search(page.body[:_SNIFF_BYTES])):
        charset = found.group(1).decode("ascii")
    try:
        return page.body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset name Python does not know
        return page.body.decode("utf-8", errors="replace")

"""The `fetch` tool against real HTTP servers on 127.0.0.1: text and HTML, the address policy on every hop, the
size and time limits, and what is (not) sent (docs/engine.md, "Web fetch")."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from omniagent.engine.tools import ToolContext, ToolLimits, default_tools
from omniagent.engine.tools.web.html_text import html_to_text
from omniagent.sandbox import address_refusal
from tests.pages import Pages, serving

PAGE = (
    "<html><head><title>Release notes</title><style>p{color:red}</style><script>track()</script></head>"
    "<body><h1>Release notes</h1><p>Version <b>2.0</b> adds a <a href='/guide'>guide</a>.</p>"
    "<ul><li>faster</li><li>smaller</li></ul></body></html>"
)


@pytest.fixture
def site() -> Iterator[Pages]:
    with serving() as pages:
        yield pages


def _ctx(workspace: Path, *, private: bool = True, **limits: int | float) -> ToolContext:
    return ToolContext.for_workspace(workspace, private_network=private, limits=ToolLimits(**limits))  # type: ignore[arg-type]


async def _fetch(url: str, ctx: ToolContext) -> tuple[bool, str]:
    result = await default_tools().run("fetch", {"url": url}, ctx)
    return result.is_error, result.output


async def test_an_html_page_comes_back_as_readable_text_with_resolved_links(site: Pages, workspace: Path) -> None:
    site.answers["/notes"] = (200, {"content-type": "text/html; charset=utf-8"}, PAGE.encode())
    error, output = await _fetch(site.url("/notes"), _ctx(workspace))
    assert not error
    head, text = output.split("\n\n", 1)
    assert head == f"{site.url('/notes')} (200 OK, text/html)"
    assert text == (f"# Release notes\n\nVersion 2.0 adds a [guide]({site.url('/guide')}).\n\n- faster\n- smaller")


async def test_text_and_json_come_back_as_they_are_and_binary_is_refused(site: Pages, workspace: Path) -> None:
    site.answers["/a.json"] = (200, {"content-type": "application/json"}, b'{"ok": true}')
    site.answers["/latin"] = (200, {"content-type": "text/plain; charset=iso-8859-1"}, "café".encode("latin-1"))
    site.answers["/img"] = (200, {"content-type": "image/png"}, b"\x89PNG\r\n\x1a\n")
    site.answers["/none"] = (200, {}, b"\x00\x01\x02")
    assert (await _fetch(site.url("/a.json"), _ctx(workspace)))[1].endswith('\n\n{"ok": true}')
    assert (await _fetch(site.url("/latin"), _ctx(workspace)))[1].endswith("\n\ncafé")
    error, output = await _fetch(site.url("/img"), _ctx(workspace))
    assert error and output == f"{site.url('/img')} is image/png, which fetch does not read: it reads HTML and text"
    assert (await _fetch(site.url("/none"), _ctx(workspace)))[0]


async def test_an_error_status_is_an_error_result_with_the_page_text(site: Pages, workspace: Path) -> None:
    error, output = await _fetch(site.url("/gone"), _ctx(workspace))
    assert error and output == f"{site.url('/gone')} (404 Not Found, text/plain)\n\nmissing"


async def test_private_and_loopback_addresses_are_refused_unless_the_session_allows_them(
    site: Pages, workspace: Path
) -> None:
    site.answers["/notes"] = (200, {"content-type": "text/plain"}, b"hello")
    for url in (site.url("/notes"), site.url("/notes", "localhost"), "http://10.1.2.3/", "http://[::1]:9/"):
        error, output = await _fetch(url, _ctx(workspace, private=False))
        assert error and "a private or loopback address" in output, output
    assert site.seen == []  # refused before any connection
    assert (await _fetch(site.url("/notes", "localhost"), _ctx(workspace))) == (
        False,
        f"{site.url('/notes', 'localhost')} (200 OK, text/plain)\n\nhello",
    )
    # The connection went to the checked address, the name kept in Host.
    assert site.seen[-1]["host"] == f"localhost:{site.port}"


async def test_every_redirect_is_checked_again(site: Pages, workspace: Path) -> None:
    """A public-looking first hop cannot bounce a fetch to cloud metadata (link-local is refused even when the
    private network is allowed), nor to another scheme; redirects are bounded."""
    site.answers["/hop"] = (302, {"location": "/notes"}, b"")
    site.answers["/notes"] = (200, {"content-type": "text/plain"}, b"landed")
    site.answers["/metadata"] = (302, {"location": "http://169.254.169.254/latest/meta-data/"}, b"")
    site.answers["/file"] = (301, {"location": "file:///etc/passwd"}, b"")
    site.answers["/loop"] = (307, {"location": "/loop"}, b"")
    assert (await _fetch(site.url("/hop"), _ctx(workspace)))[1].endswith("\n\nlanded")
    error, output = await _fetch(site.url("/metadata"), _ctx(workspace))
    assert error and output.startswith("169.254.169.254 is a link-local")
    error, output = await _fetch(site.url("/file"), _ctx(workspace))
    assert error and output.startswith("only http and https URLs can be fetched")
    error, output = await _fetch(site.url("/loop"), _ctx(workspace))
    assert error and output == "the page redirected more than 5 times"


async def test_the_size_limits_hold(site: Pages, workspace: Path) -> None:
    """At most `fetch_max_bytes` of body are read and at most `fetch_text_cap` characters returned, each cut said."""
    site.answers["/big"] = (200, {"content-type": "text/plain"}, b"x" * 500_000)
    error, output = await _fetch(site.url("/big"), _ctx(workspace, fetch_max_bytes=10_000, fetch_text_cap=4_000))
    assert not error
    _, text, read_note, text_note = output.split("\n\n")
    assert text == "x" * 4_000
    assert read_note == "[the page is larger than 10000 bytes; only the first ones were read]"
    assert text_note == "[the text is cut at 4000 of 10000 characters]"


async def test_only_our_own_two_headers_are_sent(site: Pages, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy from the environment, no credentials, no cookies carried across a redirect."""
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    site.answers["/hop"] = (302, {"location": "/notes", "set-cookie": "session=abc; Path=/"}, b"")
    site.answers["/notes"] = (200, {"content-type": "text/plain"}, b"ok")
    assert not (await _fetch(site.url("/hop"), _ctx(workspace)))[0]
    sent = site.seen[-1]
    assert set(sent) == {"path", "host", "user-agent", "accept", "accept-encoding", "connection"}
    error, output = await _fetch(f"http://user:secret@127.0.0.1:{site.port}/notes", _ctx(workspace))
    assert error and output == "URLs with a user name or password are not fetched"


async def test_the_time_limit_holds(workspace: Path) -> None:
    """A server that accepts and never answers ends the call at `fetch_timeout`."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        port = listener.getsockname()[1]
        error, output = await _fetch(f"http://127.0.0.1:{port}/", _ctx(workspace, fetch_timeout=0.2))
    finally:
        listener.close()
    assert error and output == f"fetching http://127.0.0.1:{port}/ took longer than 0.2 seconds"


@pytest.mark.parametrize(
    ("address", "public", "private"),
    [
        ("93.184.216.34", True, True),
        ("2606:4700::1111", True, True),
        ("127.0.0.1", False, True),
        ("10.0.0.1", False, True),
        ("192.168.1.1", False, True),
        ("100.100.100.100", False, True),
        ("::1", False, True),
        ("fd12::1", False, True),
        ("::ffff:10.0.0.1", False, True),
        ("64:ff9b::a00:1", False, True),
        ("169.254.169.254", False, False),
        ("fe80::1", False, False),
        ("0.0.0.0", False, False),
        ("224.0.0.1", False, False),
        ("192.0.2.1", False, False),
        ("255.255.255.255", False, False),
    ],
)
def test_the_address_policy(address: str, public: bool, private: bool) -> None:
    ip = ipaddress.ip_address(address)
    assert (address_refusal(ip, allow_private=False) is None) is public
    assert (address_refusal(ip, allow_private=True) is None) is private


def test_html_to_text_keeps_structure_and_drops_markup() -> None:
    html = (
        "<title>T</title><nav><a href='#top'>top</a></nav><h2>Install</h2><pre>pip install x\n  --upgrade\n</pre>"
        "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table><p>one<br>two &amp; <img alt=cat></p>"
        "<svg><text>drawn</text></svg><noscript>enable js</noscript>"
    )
    assert html_to_text(html, "https://example.com/") == (
        "# T\n\ntop\n\n## Install\n\n```\npip install x\n  --upgrade\n```\n\na | b\n1 | 2\n\none\ntwo & [image: cat]"
    )

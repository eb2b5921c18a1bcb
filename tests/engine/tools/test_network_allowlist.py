"""The exec sandbox's network allowlist (issue 22) at the tool level: real bubblewrap, curl and Python inside the
sandbox, the engine's proxy, and an upstream on 127.0.0.1 that the proxy's pinned hosts call `allowed.test`.

Each test reads what the model reads (the exec result), what reached the upstream, and what the proxy logged."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from omniagent.engine import sandbox_file
from omniagent.engine.sandbox_file import SandboxFileError
from omniagent.engine.tools import ToolResult, default_tools
from omniagent.sandbox import DomainRule, NetworkRules, SandboxPolicy, parse_rules
from omniagent.sandbox.network.allowlist import parse_rule

from .conftest import WAIT_LIMIT, make_ctx
from .upstream import Upstream, running_upstream

# The interpreter itself, not the venv's link to it: a venv under /tmp is hidden by the sandbox's private /tmp.
PY = os.path.realpath(sys.executable)
CURL = "curl -sS --max-time 10"
PINNED = (("allowed.test", "127.0.0.1"), ("api.wild.test", "127.0.0.1"), ("loop.test", "127.0.0.1"))
NOT_LISTED = "is not in this session's allowed domains (the user can add it)"
PROXY_LOGGER = "omniagent.sandbox.network.proxy"


@pytest.fixture
async def upstream() -> AsyncIterator[Upstream]:
    async with running_upstream() as server:
        yield server


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[tuple[int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.levelno, record.getMessage()))


@pytest.fixture
def proxy_log() -> Iterator[list[tuple[int, str]]]:
    """(level, message) of every line the proxy logs during the test."""
    handler = _Records()
    logger = logging.getLogger(PROXY_LOGGER)
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _rules(*domains: str, private: bool) -> NetworkRules:
    return NetworkRules(parse_rules(list(domains)), allow_private=private, hosts=PINNED, session="s-test")


async def _exec(workspace: Path, rules: NetworkRules, command: str) -> ToolResult:
    ctx = make_ctx(workspace, sandbox=SandboxPolicy(mode="sandboxed", allowlist=rules))
    return await asyncio.wait_for(default_tools().run("exec", {"command": command}, ctx), 60)


def _notes(result: ToolResult) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("[network: ")]


async def test_listed_domains_are_reached_through_the_proxy(
    workspace: Path, upstream: Upstream, proxy_log: list[tuple[int, str]]
) -> None:
    """curl (a plain request and a CONNECT tunnel) and Python's urllib reach a listed name through the proxy the
    environment names; names match case-insensitively and without a trailing dot, a wildcard covers a name under
    it; a forwarded request goes out in origin form, without the proxy's credentials, one per connection. Every
    connection is logged with its address; nothing is noted for the model."""
    p = upstream.port
    urllib = f"import urllib.request as u; print(u.urlopen('http://allowed.test:{p}/urllib').read().decode())"
    command = "; ".join(
        [
            f"{CURL} -U user:proxy-pw http://allowed.test:{p}/plain",
            f"{CURL} -p http://Allowed.TEST.:{p}/tunnel",
            f"{CURL} http://api.wild.test:{p}/wild",
            f'{PY} -I -c "{urllib}"',
        ]
    )
    result = await _exec(workspace, _rules(f"allowed.test:{p}", f"*.wild.test:{p}", private=True), command)
    assert not result.is_error, result.output
    assert result.output.endswith("[exit code 0]")
    assert _notes(result) == []
    assert upstream.request_lines == [
        "GET /plain HTTP/1.1",
        "GET /tunnel HTTP/1.1",
        "GET /wild HTTP/1.1",
        "GET /urllib HTTP/1.1",
    ]
    plain = upstream.heads[0]
    assert f"Host: allowed.test:{p}\r\n" in plain and "Connection: close\r\n" in plain
    assert "Proxy-" not in plain and "proxy-pw" not in result.output
    allowed = [message for level, message in proxy_log if level == logging.INFO]
    assert len(allowed) == 4, proxy_log
    for message, host in zip(allowed, ("allowed.test", "allowed.test", "api.wild.test", "allowed.test"), strict=True):
        assert f"session=s-test allowed {host}:{p} address=127.0.0.1 up=" in message
        assert " down=0 " not in message


async def test_unlisted_names_ports_and_forbidden_addresses_are_refused_and_the_model_is_told(
    workspace: Path, upstream: Upstream, proxy_log: list[tuple[int, str]]
) -> None:
    """A name not listed, a listed name on another port, an IP literal not listed, the metadata address even when
    listed, a listed name resolving to loopback while the session's private network is not allowed, a wildcard's
    own domain: each is answered 403 (the command prints the reason), noted in the result and logged; nothing
    reaches the upstream."""
    p = upstream.port
    urllib = "import urllib.request as u; u.urlopen('https://denied.test/')"
    command = "; ".join(
        [
            f"{CURL} http://denied.test:{p}/",
            f"{CURL} http://allowed.test:{p}/",
            f"{CURL} --noproxy '' http://127.0.0.1:{p}/",
            f"{CURL} -p https://169.254.169.254/latest/meta-data/",
            f"{CURL} http://loop.test:{p}/",
            f"{CURL} http://wild.test:{p}/",
            f'{PY} -I -c "{urllib}" 2>&1 | tail -n 1',
        ]
    )
    rules = _rules("allowed.test", "169.254.169.254", f"loop.test:{p}", f"*.wild.test:{p}", private=False)
    result = await _exec(workspace, rules, command)
    assert upstream.heads == []
    out = result.output
    assert f"omniagent exec sandbox: denied.test {NOT_LISTED}" in out
    assert f"omniagent exec sandbox: port {p} of allowed.test is not allowed (only 80, 443;" in out
    assert f"omniagent exec sandbox: 127.0.0.1 {NOT_LISTED}" in out
    assert "CONNECT tunnel failed, response 403" in out
    assert f"Tunnel connection failed: 403 denied.test {NOT_LISTED}" in out
    private = "a private or loopback address, which sandboxed commands reach only when the session allows its private"
    assert _notes(result) == [
        f"[network: refused denied.test:{p} — denied.test {NOT_LISTED}]",
        f"[network: refused allowed.test:{p} — port {p} of allowed.test is not allowed (only 80, 443; a rule like "
        f"allowed.test:{p} would allow it)]",
        f"[network: refused 127.0.0.1:{p} — 127.0.0.1 {NOT_LISTED}]",
        "[network: refused 169.254.169.254:443 — 169.254.169.254 is a link-local, multicast, reserved or "
        "unspecified address, which the sandbox never reaches]",
        f"[network: refused loop.test:{p} — loop.test resolves to 127.0.0.1, {private} network]",
        "[network: 2 more kinds of refusal; the engine's log lists them]",
    ]
    refused = [message for level, message in proxy_log if level == logging.WARNING]
    assert len(refused) == 7, proxy_log
    assert all(" session=s-test refused " in message and " up=0 down=0 " in message for message in refused)
    assert f"refused wild.test:{p} address=-" in refused[5] and refused[5].endswith(f"wild.test {NOT_LISTED}")
    assert "refused denied.test:443 address=-" in refused[6]


async def test_without_the_proxy_nothing_is_reachable_and_dns_finds_nothing(
    workspace: Path, upstream: Upstream
) -> None:
    """The sandbox keeps its own network namespace: a direct connection to the upstream's port meets the sandbox's
    own empty loopback, any other address has no route, and no name resolves inside."""
    p = upstream.port
    connect = "import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 3)"
    resolve = "import socket; socket.getaddrinfo('pypi.org', 443)"
    command = "; ".join(
        [
            f"{CURL} --noproxy '*' http://127.0.0.1:{p}/; echo direct=$?",
            f'{PY} -I -c "{connect}" 127.0.0.1 {p} 2>&1 | tail -n 1',
            f'{PY} -I -c "{connect}" 1.1.1.1 80 2>&1 | tail -n 1',
            "getent hosts allowed.test pypi.org; echo dns=$?",
            f'{PY} -I -c "{resolve}" 2>&1 | tail -n 1',
        ]
    )
    result = await _exec(workspace, _rules(f"allowed.test:{p}", private=True), command)
    out = result.output
    assert "direct=7" in out  # curl: couldn't connect
    assert "ConnectionRefusedError" in out
    assert "Network is unreachable" in out
    assert "dns=2" in out  # getent: not found
    assert "socket.gaierror" in out
    assert upstream.heads == []
    assert _notes(result) == []


async def test_the_command_holds_no_way_to_the_engine_and_keeps_its_signals(workspace: Path) -> None:
    """The bridge's socketpair and the start pipe are closed before the command's shell runs, so the command cannot
    hand the engine anything itself; SIGPIPE comes back to its default (Python ignores it), so `yes | head` ends."""
    command = "ls -l /proc/$$/fd | grep -c socket:; yes | head -n 1; grep SigIgn /proc/$$/status"
    result = await _exec(workspace, _rules("allowed.test", private=False), command)
    assert result.output == "0\ny\nSigIgn:\t0000000000000000\n[exit code 0]"


HOLD = """
import os, socket, sys
proxy = int(os.environ["http_proxy"].rsplit(":", 1)[1])
target, count = sys.argv[1], int(sys.argv[2])
statuses, kept = [], []
for _ in range(count):
    s = socket.create_connection(("127.0.0.1", proxy), 10)
    s.sendall(f"CONNECT {target} HTTP/1.1\\r\\nHost: {target}\\r\\n\\r\\n".encode())
    f = s.makefile("rb")
    status = f.readline().split()[1].decode()
    statuses.append(status)
    if status == "200":
        while f.readline() not in (b"\\r\\n", b""):
            pass
        s.sendall(b"GET /hold HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
        while (line := f.readline()) and b"holding" not in line:
            pass
    kept.append((s, f))
print(statuses.count("200"), statuses[-1], flush=True)
os._exit(0)
"""


async def test_open_connections_are_bounded_and_end_with_the_command(workspace: Path, upstream: Upstream) -> None:
    """64 tunnels at once: the 65th is refused (503), and the model is told; every tunnel still open when the
    command exits (without closing them) is closed toward the host."""
    (workspace / "hold.py").write_text(HOLD)
    p = upstream.port
    result = await _exec(workspace, _rules(f"allowed.test:{p}", private=True), f"{PY} -I hold.py allowed.test:{p} 65")
    assert result.output.splitlines()[0] == "64 503"
    assert _notes(result) == ["[network: refused a request — more than 64 connections at once]"]
    assert await upstream.wait_released(64, WAIT_LIMIT)


async def test_a_malformed_or_origin_form_request_is_a_400(workspace: Path, upstream: Upstream) -> None:
    """Only CONNECT and absolute http:// URLs are proxied; a request for the proxy itself is refused with a reason."""
    p = upstream.port
    command = f"{CURL} -H 'Host: allowed.test:{p}' \"$http_proxy/direct\"; {CURL} --noproxy '' ftp://allowed.test/"
    result = await _exec(workspace, _rules(f"allowed.test:{p}", private=True), command)
    usage = "the proxy takes CONNECT host:port or an absolute http:// URL"
    assert result.output.count(f"omniagent exec sandbox: {usage}\n") == 2
    assert _notes(result) == [f"[network: refused a request — {usage} (2 times)]"]
    assert upstream.heads == []


def test_rules_parse_and_match_as_documented() -> None:
    """Exact names, wildcards (subdomains only), IP literals (only when listed), ports (80 and 443 unless named);
    names case-insensitive, without a trailing dot, in IDNA form; anything else refused with a reason."""
    assert parse_rule(" PyPI.org. ") == DomainRule("pypi.org")
    assert parse_rule("*.npmjs.org") == DomainRule("npmjs.org", wildcard=True)
    assert parse_rule("example.com:8443") == DomainRule("example.com", port=8443)
    assert parse_rule("[FD00::5]:8080") == DomainRule("fd00::5", port=8080)
    assert parse_rule("bücher.de") == DomainRule("xn--bcher-kva.de")
    assert [str(rule) for rule in parse_rules(["a.test", "*.b.test:81", "[::1]:8080", "A.test"])] == [
        "a.test",
        "*.b.test:81",
        "[::1]:8080",
    ]
    rules = NetworkRules(parse_rules(["pypi.org", "*.npmjs.org", "10.0.0.5", "git.test:2222"]))
    assert rules.refusal("pypi.org", 443) is None and rules.refusal("pypi.org", 80) is None
    assert rules.refusal("registry.npmjs.org", 443) is None
    assert rules.refusal("npmjs.org", 443) == f"npmjs.org {NOT_LISTED}"
    assert rules.refusal("evilpypi.org", 443) == f"evilpypi.org {NOT_LISTED}"
    assert rules.refusal("pypi.org.evil.test", 443) == f"pypi.org.evil.test {NOT_LISTED}"
    assert rules.refusal("10.0.0.5", 80) is None and rules.refusal("10.0.0.6", 80) == f"10.0.0.6 {NOT_LISTED}"
    assert NetworkRules(parse_rules(["*.0.0.5"])).refusal("10.0.0.5", 80) == f"10.0.0.5 {NOT_LISTED}"
    assert rules.refusal("git.test", 2222) is None
    assert rules.refusal("git.test", 443) == (
        "port 443 of git.test is not allowed (only 2222; a rule like git.test:443 would allow it)"
    )
    for bad, why in [
        ("", "is not a domain rule"),
        ("*", "is not a valid host name"),
        ("*.10.0.0.5", "a wildcard names a domain, not an address"),
        ("a..b", "is not a valid host name"),
        ("a.test:0", "the port must be a number from 1 to 65535"),
        ("a.test:http", "the port must be a number from 1 to 65535"),
        ("-a.test", "is not a valid host name"),
        ("a b.test", "is not a valid host name"),
    ]:
        with pytest.raises(ValueError, match=why):
            parse_rule(bad)
    with pytest.raises(ValueError, match="at most 256 allowed domains"):
        parse_rules([f"h{i}.test" for i in range(257)])


def test_sandbox_json_gives_the_default_list_and_pinned_hosts_and_a_bad_entry_is_a_bad_file(tmp_path: Path) -> None:
    """`network.allowed_domains` and `network.hosts` of sandbox.json beside its limits; no file is no default; a rule
    that is not one or an address that is not one makes the file bad, saying which (never a shorter list silently)."""
    assert sandbox_file.load(tmp_path).network.allowed_domains == ()
    document = {
        "limits": {"output_mb": 8},
        "network": {
            "allowed_domains": ["pypi.org", "*.pythonhosted.org"],
            "hosts": {"mirror.internal": "10.0.0.5", "two.internal": ["10.0.0.6", "fd00::6"]},
        },
    }
    (tmp_path / "sandbox.json").write_text(json.dumps(document))
    config = sandbox_file.load(tmp_path).network
    assert [str(rule) for rule in config.allowed_domains] == ["pypi.org", "*.pythonhosted.org"]
    assert config.hosts == (
        ("mirror.internal", "10.0.0.5"),
        ("two.internal", "10.0.0.6"),
        ("two.internal", "fd00::6"),
    )
    for network, why in [
        ({"allowed_domains": ["not a domain"]}, "is not a valid host name"),
        ({"allowed_domains": [7]}, "Expected `str`"),
        ({"hosts": {"bad.internal": "x"}}, "is not an IP address"),
        ({"allow": []}, "unknown field"),
    ]:
        (tmp_path / "sandbox.json").write_text(json.dumps({"network": network}))
        with pytest.raises(SandboxFileError, match=why):
            sandbox_file.load(tmp_path)

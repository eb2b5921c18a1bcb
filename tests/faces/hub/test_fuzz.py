"""Fuzzing the real `omniagent hub` process on every face a client can reach: HTTP POST bodies, HTTP headers, raw
HTTP bytes, WebSocket messages and raw WebSocket frames, at least 1,000 examples each (hypothesis). Every answer is
a status the transport documents (never 500), and the hub still answers a real exchange afterwards."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.sync.client import ClientConnection, connect

from tests.faces.hub.harness import HubProcess, call, hub_process, initialize, settled_fds

EXAMPLES = 1000
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
# What a POST may be answered: the RFD's statuses and our limits. Never 500.
DOCUMENTED = {200, 202, 400, 404, 413, 415, 503}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2]),
        "id": st.one_of(st.integers(), st.text(max_size=8), st.none(), st.floats()),
        "method": st.sampled_from(["initialize", "session/new", "session/prompt", "x"]) | st.text(max_size=12),
        "params": json_values,
        "result": json_values,
    },
)
bodies = st.one_of(
    st.binary(max_size=300),
    json_values.map(lambda value: json.dumps(value).encode()),
    messages.map(lambda value: json.dumps(value).encode()),
)
# The framing headers are the client's to write (a wrong one makes the client fail, not the hub).
FRAMING = {"content-length", "transfer-encoding", "connection", "upgrade", "te", "keep-alive"}
header_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=20).filter(
    lambda name: name not in FRAMING
)
header_values = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=60).map(str.strip)


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with hub_process(tmp_path_factory.mktemp("hub"), "--mock", "turn", "--max-clients", "1000") as running:
        yield running
        assert running.proc.poll() is None, running.stderr()


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as made:
        yield made


@pytest.fixture(scope="module")
def connection(hub: HubProcess, client: httpx.Client) -> str:
    answer = client.post(f"{hub.url}/acp", json=initialize(), headers=hub.headers())
    assert answer.status_code == 200
    return answer.headers["acp-connection-id"]


def _still_answers(hub: HubProcess) -> None:
    with httpx.Client(timeout=30) as fresh:
        answer = fresh.post(f"{hub.url}/acp", json=initialize(), headers=hub.headers())
        assert answer.status_code == 200 and answer.json()["result"]["connectionId"]
        gone = fresh.delete(
            f"{hub.url}/acp", headers=hub.headers(**{"Acp-Connection-Id": answer.headers["acp-connection-id"]})
        )
        assert gone.status_code == 202


def test_post_bodies(hub: HubProcess, client: httpx.Client, connection: str) -> None:
    statuses: set[int] = set()

    @FUZZ
    @given(body=bodies, with_connection=st.booleans(), content_type=st.sampled_from(["application/json", "text/plain"]))
    def post(body: bytes, with_connection: bool, content_type: str) -> None:
        headers = hub.headers(**{"Content-Type": content_type})
        if with_connection:
            headers["Acp-Connection-Id"] = connection
        answer = client.post(f"{hub.url}/acp", content=body, headers=headers)
        statuses.add(answer.status_code)
        assert answer.status_code in DOCUMENTED, (answer.status_code, answer.text)
        if answer.status_code >= 400:
            assert answer.json()["error"]["message"]  # the JSON-RPC error shape

    post()
    assert {202, 400, 415} <= statuses  # the fuzz reached past the front door
    _still_answers(hub)


def test_headers(hub: HubProcess, client: httpx.Client, connection: str) -> None:
    @FUZZ
    @given(
        method=st.sampled_from(["GET", "POST", "DELETE", "PUT", "OPTIONS"]),
        headers=st.dictionaries(header_names, header_values, max_size=6),
        known=st.dictionaries(
            st.sampled_from(
                ["acp-connection-id", "acp-session-id", "last-event-id", "accept", "content-type", "origin"]
            ),
            header_values,
            max_size=4,
        ),
    )
    def request(method: str, headers: dict[str, str], known: dict[str, str]) -> None:
        sent = {**headers, **known, **hub.headers()}
        if "accept" in known and known.get("acp-connection-id") == "":
            sent["acp-connection-id"] = connection
        with client.stream(
            method, f"{hub.url}/acp", headers=sent, content=b"{}" if method == "POST" else None
        ) as answer:
            assert answer.status_code in DOCUMENTED | {405, 406, 421, 403}, answer.status_code

    request()
    _still_answers(hub)


def test_raw_http_bytes(hub: HubProcess) -> None:
    auth = f"Authorization: Bearer {hub.token}\r\n".encode()
    prefix = f"POST /acp HTTP/1.1\r\nHost: 127.0.0.1:{hub.port}\r\n".encode() + auth

    @FUZZ
    @given(tail=st.binary(max_size=200), whole=st.booleans())
    def send(tail: bytes, whole: bool) -> None:
        with socket.create_connection(("127.0.0.1", hub.port), timeout=30) as sock:
            sock.sendall(tail if whole else prefix + tail)
            sock.shutdown(socket.SHUT_WR)
            answer = _read_all(sock)
        if answer:
            status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0
            assert (status and status < 500) or status == 501, answer[:200]

    send()
    _still_answers(hub)


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_websocket_messages(hub: HubProcess) -> None:
    with connect(hub.url.replace("http", "ws") + "/acp", additional_headers=hub.headers()) as ws:
        ws.send(json.dumps(initialize()))
        assert json.loads(ws.recv(timeout=30))["id"] == 1
        probes = iter(range(10**9))

        @FUZZ
        @given(
            frame=st.one_of(
                st.text(max_size=300), bodies.map(lambda body: body.decode("utf-8", "replace")), st.binary(max_size=100)
            )
        )
        def send(frame: str | bytes) -> None:
            ws.send(frame)
            probe = f"probe-{next(probes)}"
            ws.send(json.dumps(call(probe, "_omniagent/probe")))
            _until_answer(ws, probe)

        send()
    _still_answers(hub)


def _until_answer(ws: ClientConnection, probe: str) -> None:
    """Read until the probe's answer (whatever the fuzzed frame made the hub say first)."""
    while True:
        message: Any = json.loads(ws.recv(timeout=30))
        assert isinstance(message, dict | list)
        if isinstance(message, dict) and message.get("id") == probe:
            assert "error" in message or "result" in message
            return


def test_raw_websocket_frames(hub: HubProcess) -> None:
    upgrade = (
        f"GET /acp HTTP/1.1\r\nHost: 127.0.0.1:{hub.port}\r\nAuthorization: Bearer {hub.token}\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
        f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n\r\n"
    ).encode()
    _still_answers(hub)
    baseline = hub.fds()

    @FUZZ
    @given(frame=st.binary(min_size=1, max_size=200))
    def send(frame: bytes) -> None:
        with socket.create_connection(("127.0.0.1", hub.port), timeout=30) as sock:
            sock.sendall(upgrade)
            head = b""
            while b"\r\n\r\n" not in head:
                head += sock.recv(4096)
            assert head.startswith(b"HTTP/1.1 101"), head
            sock.sendall(frame)  # then gone: a frame cut short is as likely as a whole bad one

    send()
    _still_answers(hub)
    assert settled_fds(hub, baseline) <= baseline  # every one of those sockets was closed by the hub

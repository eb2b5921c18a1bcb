"""The real `omniagent hub` process refuses what it must: no token or a wrong one (401), a wrong `Host` (421), a
foreign `Origin` (403), over HTTP/1.1, HTTP/2 and the WebSocket upgrade; its token never shows on any answer, its
stdout or its log; its files are private; plaintext beyond loopback is refused; TLS serves HTTP/2."""

from __future__ import annotations

import json
import socket
import ssl
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import ConnectionClosedError, InvalidStatus
from websockets.sync.client import connect

from tests.faces.hub.harness import HubProcess, hub_process, initialize

MOCK = ("--mock", "turn")


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with hub_process(tmp_path_factory.mktemp("hub"), *MOCK) as running:
        yield running


def _refused(answer: httpx.Response, status: int, hub: HubProcess) -> dict[str, object]:
    assert answer.status_code == status, answer.text
    assert hub.token not in answer.text and hub.token not in str(answer.headers)
    body: dict[str, object] = answer.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None and "error" in body
    return body


@pytest.mark.parametrize("http2", [False, True])
@pytest.mark.parametrize(
    "authorization", [None, "Bearer", "Bearer wrong-token", "Basic dXNlcjpwYXNz", "bearer x", "Token {token}"]
)
def test_a_request_without_the_right_token_is_401(hub: HubProcess, http2: bool, authorization: str | None) -> None:
    headers = {} if authorization is None else {"Authorization": authorization.format(token=hub.token)}
    with httpx.Client(http1=not http2, http2=http2) as client:
        for method in ("POST", "GET", "DELETE"):
            answer = client.request(method, f"{hub.url}/acp", json=initialize(), headers=headers)
            _refused(answer, 401, hub)
            assert answer.headers["www-authenticate"].startswith("Bearer")
            assert answer.http_version == ("HTTP/2" if http2 else "HTTP/1.1")


def test_the_token_in_the_query_is_not_a_token(hub: HubProcess) -> None:
    answer = httpx.post(f"{hub.url}/acp?token={hub.token}", json=initialize())
    assert answer.status_code == 401


@pytest.mark.parametrize(
    "host",
    ["evil.example", "evil.example:{port}", "127.0.0.1:1", "127.0.0.2:{port}", "localhost:{port}0", "[::2]:{port}"],
)
def test_a_wrong_host_is_421_even_with_the_token(hub: HubProcess, host: str) -> None:
    answer = httpx.post(f"{hub.url}/acp", json=initialize(), headers=hub.headers(Host=host.format(port=hub.port)))
    _refused(answer, 421, hub)


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}", "[::1]:{port}"])
def test_the_loopback_names_with_our_port_are_accepted(hub: HubProcess, host: str) -> None:
    answer = httpx.post(f"{hub.url}/acp", json=initialize(), headers=hub.headers(Host=host.format(port=hub.port)))
    assert answer.status_code == 200, answer.text
    httpx.delete(f"{hub.url}/acp", headers=hub.headers(**{"Acp-Connection-Id": answer.headers["acp-connection-id"]}))


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example", "null", "http://127.0.0.1:1", "https://127.0.0.1:{port}", "http://localhost:{port}/x", "x"],
)
def test_a_foreign_origin_is_403_even_with_the_token(hub: HubProcess, origin: str) -> None:
    answer = httpx.post(f"{hub.url}/acp", json=initialize(), headers=hub.headers(Origin=origin.format(port=hub.port)))
    _refused(answer, 403, hub)


def test_our_own_origin_is_accepted(hub: HubProcess) -> None:
    answer = httpx.post(f"{hub.url}/acp", json=initialize(), headers=hub.headers(Origin=f"http://localhost:{hub.port}"))
    assert answer.status_code == 200
    httpx.delete(f"{hub.url}/acp", headers=hub.headers(**{"Acp-Connection-Id": answer.headers["acp-connection-id"]}))


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 401),
        ({"Authorization": "Bearer nope"}, 401),
        ({"Authorization": "Bearer {token}", "Origin": "http://evil.example"}, 403),
        ({"Authorization": "Bearer {token}", "Host": "evil.example"}, 421),
    ],
)
@pytest.mark.parametrize("path", ["/acp", "/acp/mock", "/sidecar"])
def test_a_websocket_upgrade_is_refused_the_same_way(
    hub: HubProcess, headers: dict[str, str], status: int, path: str
) -> None:
    sent = {name: value.format(token=hub.token) for name, value in headers.items()}
    host = sent.pop("Host", f"127.0.0.1:{hub.port}")  # the client writes Host from the URL
    sock = socket.create_connection(("127.0.0.1", hub.port))
    with pytest.raises(InvalidStatus) as refused:
        connect(f"ws://{host}{path}", sock=sock, additional_headers=sent, open_timeout=10).close()
    response = refused.value.response
    assert response.status_code == status
    assert hub.token.encode() not in response.body and json.loads(response.body)["error"]


def test_a_websocket_with_the_token_is_served(hub: HubProcess) -> None:
    with connect(hub.url.replace("http", "ws") + "/acp", additional_headers=hub.headers()) as ws:
        ws.send(json.dumps(initialize()))
        assert json.loads(ws.recv(timeout=30))["id"] == 1


def test_a_body_over_the_line_limit_is_413_and_a_frame_over_it_closes_its_socket(hub: HubProcess) -> None:
    big = b'{"pad":"' + b"x" * (16 * 1024 * 1024) + b'"}'
    answer = httpx.post(f"{hub.url}/acp", content=big, headers=hub.headers(**{"Content-Type": "application/json"}))
    _refused(answer, 413, hub)
    with connect(hub.url.replace("http", "ws") + "/acp", additional_headers=hub.headers(), max_size=None) as ws:
        ws.send(big.decode())
        with pytest.raises(ConnectionClosedError) as closed:
            ws.recv(timeout=30)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009  # message too big


def test_the_token_shows_nowhere_and_its_files_are_private(hub: HubProcess, tmp_path: Path) -> None:
    folder = Path(hub.stderr_path).parent / "hub"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "token").stat().st_mode) == 0o600
    assert hub.token not in hub.banner and str(folder / "token") in hub.banner
    assert "omniagent hub token" in hub.banner
    httpx.post(f"{hub.url}/acp", json=initialize(), headers={"Authorization": f"Bearer {hub.token}x"})
    log = hub.stderr()
    assert "refused POST /acp" in log  # the log says what was refused (OMNIAGENT_LOG=info)…
    assert hub.token not in log  # …and never the token


def test_token_rotation_takes_effect_without_a_restart(tmp_path: Path) -> None:
    with hub_process(tmp_path, *MOCK) as running:
        old = running.token
        printed = _cli("hub", "token", "--data-dir", str(tmp_path))
        assert printed == old
        new = _cli("hub", "token", "--rotate", "--data-dir", str(tmp_path))
        assert new != old and len(new) >= 40
        assert (
            httpx.post(f"{running.url}/acp", json=initialize(), headers={"Authorization": f"Bearer {old}"}).status_code
            == 401
        )
        answer = httpx.post(f"{running.url}/acp", json=initialize(), headers={"Authorization": f"Bearer {new}"})
        assert answer.status_code == 200


def _cli(*argv: str) -> str:
    done = subprocess.run([sys.executable, "-m", "omniagent", *argv], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_plaintext_beyond_loopback_is_refused_and_half_a_tls_pair_too(tmp_path: Path) -> None:
    for extra, says in [
        (["--host", "0.0.0.0"], "without TLS"),
        (["--tls-cert", str(tmp_path / "cert.pem")], "go together"),
    ]:
        done = subprocess.run(
            [sys.executable, "-m", "omniagent", "hub", "--port", "0", "--data-dir", str(tmp_path), *extra],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2 and says in done.stderr and done.stdout == ""


def test_tls_serves_http2_with_the_same_checks(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    with hub_process(tmp_path, *MOCK, "--tls-cert", str(cert), "--tls-key", str(key)) as running:
        assert running.url.startswith("https://")
        with httpx.Client(http2=True, verify=ssl.create_default_context(cafile=cert)) as client:
            assert client.post(f"{running.url}/acp", json=initialize()).status_code == 401
            answer = client.post(f"{running.url}/acp", json=initialize(), headers=running.headers())
            assert answer.status_code == 200 and answer.http_version == "HTTP/2"
            origin = running.headers(Origin=f"http://127.0.0.1:{running.port}")  # the scheme is part of the origin
            assert client.post(f"{running.url}/acp", json=initialize(), headers=origin).status_code == 403

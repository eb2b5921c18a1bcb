"""How a browser gets into the real `omniagent hub` (issue 24): the page's files are public and locked down by their
headers; its login trades the token (or a one-time code from `omniagent hub open`) for a cookie that is not the
token; the cookie opens the page's routes only (the sidecar socket from our own Origin, the batch's files), never ACP;
no cookie, a foreign Origin, another site, an expired cookie or a rotated token is refused; the token is in no URL,
answer or log; a batch's files are served read-only with every way out of its folder refused."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from omniagent.faces.hub.web.door import mint_code
from tests.faces.hub.harness import HubProcess, hub_process, initialize

ROOT = Path(__file__).resolve().parents[3]
SECRET = "the token file of another folder"


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A batch job's folder as `omniagent batch` leaves it (the parts served), and things beside it to reach for."""
    root = tmp_path_factory.mktemp("batch")
    (root / "outside.txt").write_text(SECRET)
    out = root / "out"
    trial = out / "tasks" / "t1" / "omniagent"
    trial.mkdir(parents=True)
    (out / "report.html").write_text('<!doctype html><a href="tasks/t1/omniagent/result.json">result</a>')
    (out / "job.json").write_text('{"finished": 1}')
    (trial / "result.json").write_text('{"task": "t1"}')
    (trial / "diff.patch").write_text("<script>alert(1)</script>\n")
    (trial / "page.html").write_text("<script>alert(2)</script>")
    (out / ".hidden").mkdir()
    (out / ".hidden" / "x.txt").write_text(SECRET)
    (out / "escape.txt").symlink_to(root / "outside.txt")
    return out


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory, out: Path) -> Iterator[HubProcess]:
    with hub_process(tmp_path_factory.mktemp("hub"), "--mock", "turn", "--batch-dir", str(out)) as running:
        yield running


def _origin(hub: HubProcess) -> dict[str, str]:
    return {"Origin": hub.url}


def _login(hub: HubProcess, **fields: str) -> httpx.Response:
    return httpx.post(f"{hub.url}/login", json=fields, headers=_origin(hub))


def _cookie(hub: HubProcess) -> str:
    """`name=value` of a fresh login's cookie."""
    answer = _login(hub, token=hub.token)
    assert answer.status_code == 204, answer.text
    return answer.headers["set-cookie"].split(";", 1)[0]


def _upgrade(hub: HubProcess, headers: dict[str, str]) -> int:
    """The status of a `/sidecar` upgrade with these headers (101 when it is served)."""
    try:
        with connect(f"{hub.url.replace('http', 'ws')}/sidecar", additional_headers=headers, open_timeout=10) as ws:
            assert json.loads(ws.recv(timeout=10))["hello"]["protocol"] == 1
            return 101
    except InvalidStatus as refused:
        assert hub.token.encode() not in refused.response.body
        return refused.response.status_code


def test_the_page_is_public_and_locked_down_by_its_headers(hub: HubProcess) -> None:
    for path in ("/", "/page/app.js", "/page/style.css", "/page/vendor/markdown-it.esm.min.mjs"):
        answer = httpx.get(hub.url + path)
        assert answer.status_code == 200, path
        policy = answer.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src 'self'" in policy and "connect-src 'self'" in policy
        assert "frame-ancestors 'none'" in policy and "unsafe-inline" not in policy
        assert answer.headers["x-content-type-options"] == "nosniff"
        again = httpx.get(hub.url + path, headers={"If-None-Match": answer.headers["etag"]})
        assert again.status_code == 304
    assert httpx.get(f"{hub.url}/").headers["content-type"] == "text/html; charset=utf-8"
    assert httpx.get(f"{hub.url}/page/app.js").headers["content-type"].startswith("text/javascript")
    for path in ("/page/nope.js", "/page/../serve.py", "/page/%2e%2e/serve.py", "/page/", "/index.html"):
        assert httpx.get(hub.url + path).status_code in (401, 404), path
    assert httpx.get(f"{hub.url}/auth").json() == {"logged_in": False}
    assert httpx.get(f"{hub.url}/", headers={"Host": "evil.example"}).status_code == 421


def test_without_a_cookie_the_socket_and_the_batch_are_refused(hub: HubProcess) -> None:
    assert _upgrade(hub, _origin(hub)) == 401
    assert _upgrade(hub, {}) == 401
    assert httpx.get(f"{hub.url}/batch/report.html").status_code == 401
    assert httpx.post(f"{hub.url}/acp", json=initialize(), headers=_origin(hub)).status_code == 401


def test_the_login_sets_a_cookie_that_is_not_the_token(hub: HubProcess) -> None:
    answer = _login(hub, token=hub.token)
    assert answer.status_code == 204
    cookie = answer.headers["set-cookie"]
    name, _, rest = cookie.partition("=")
    value = rest.split(";", 1)[0]
    assert name == f"omniagent_hub_{hub.port}"
    assert hub.token not in cookie and value and value != hub.token
    flags = {flag.strip().split("=")[0] for flag in cookie.split(";")[1:]}
    assert flags == {"Max-Age", "Path", "HttpOnly", "SameSite"}
    assert "SameSite=Strict" in cookie and "Path=/" in cookie and "Max-Age=86400" in cookie
    # What the cookie is: its expiry and an HMAC of it keyed by the token.
    expires, _, mac = value.partition(".")
    digest = hmac.new(hub.token.encode(), f"omniagent hub page|{expires}".encode(), hashlib.sha256).digest()
    assert mac == base64.urlsafe_b64encode(digest).decode().rstrip("=")
    assert abs(int(expires) - time.time() - 86400) < 60


@pytest.mark.parametrize(
    ("fields", "headers", "status"),
    [
        ({"token": "wrong"}, "origin", 401),
        ({"token": ""}, "origin", 401),
        ({"code": "1.2.3"}, "origin", 401),
        ({}, "origin", 401),
        ({"token": "{token}"}, "none", 401),  # a login comes from a browser: it has our Origin
        ({"token": "{token}"}, "foreign", 403),
    ],
)
def test_a_wrong_login_gets_no_cookie(hub: HubProcess, fields: dict[str, str], headers: str, status: int) -> None:
    sent = {name: value.format(token=hub.token) for name, value in fields.items()}
    origin = {"origin": _origin(hub), "none": {}, "foreign": {"Origin": "http://evil.example"}}[headers]
    answer = httpx.post(f"{hub.url}/login", json=sent, headers=origin)
    assert answer.status_code == status and "set-cookie" not in answer.headers
    assert hub.token not in answer.text


def test_a_login_that_is_not_json_or_too_long_is_refused(hub: HubProcess) -> None:
    form = httpx.post(f"{hub.url}/login", data={"token": hub.token}, headers=_origin(hub))
    assert form.status_code == 415 and "set-cookie" not in form.headers
    padded = json.dumps({"token": hub.token, "pad": "x" * 100_000})
    long = httpx.post(f"{hub.url}/login", content=padded, headers=_origin(hub) | {"Content-Type": "application/json"})
    assert long.status_code == 413 and "set-cookie" not in long.headers


def test_the_cookie_opens_the_socket_from_our_origin_only(hub: HubProcess) -> None:
    cookie = {"Cookie": _cookie(hub)}
    assert _upgrade(hub, cookie | _origin(hub)) == 101
    assert _upgrade(hub, cookie | {"Origin": f"http://localhost:{hub.port}"}) == 101
    assert _upgrade(hub, cookie) == 401  # a browser always sends Origin on an upgrade: a cookie without one is no page
    assert _upgrade(hub, cookie | {"Origin": "http://evil.example"}) == 403
    assert _upgrade(hub, cookie | {"Origin": "null"}) == 403
    assert _upgrade(hub, cookie | _origin(hub) | {"Sec-Fetch-Site": "same-site"}) == 401
    assert _upgrade(hub, cookie | _origin(hub) | {"Sec-Fetch-Site": "cross-site"}) == 401
    assert _upgrade(hub, cookie | _origin(hub) | {"Sec-Fetch-Site": "same-origin"}) == 101
    assert httpx.get(f"{hub.url}/auth", headers=cookie).json()["logged_in"] is True


def test_the_cookie_does_not_open_acp(hub: HubProcess) -> None:
    cookie = {"Cookie": _cookie(hub)} | _origin(hub)
    assert httpx.post(f"{hub.url}/acp", json=initialize(), headers=cookie).status_code == 401
    sock = socket.create_connection(("127.0.0.1", hub.port))
    with pytest.raises(InvalidStatus) as refused:
        connect(f"{hub.url.replace('http', 'ws')}/acp", sock=sock, additional_headers=cookie, open_timeout=10)
    assert refused.value.response.status_code == 401


def test_an_expired_or_forged_cookie_is_refused(hub: HubProcess) -> None:
    name = f"omniagent_hub_{hub.port}"
    past = int(time.time()) - 10
    digest = hmac.new(hub.token.encode(), f"omniagent hub page|{past}".encode(), hashlib.sha256).digest()
    expired = f"{name}={past}.{base64.urlsafe_b64encode(digest).decode().rstrip('=')}"
    future = int(time.time()) + 3600
    for cookie in (expired, f"{name}={future}.AAAA", f"{name}={hub.token}", f"other={_cookie(hub).split('=', 1)[1]}"):
        assert _upgrade(hub, {"Cookie": cookie} | _origin(hub)) == 401, cookie


def test_a_one_time_code_logs_in_once(hub: HubProcess, tmp_path: Path) -> None:
    printed = _hub_open(hub, "--print")
    assert printed.returncode == 0, printed.stderr
    url = printed.stdout.strip()
    assert url.startswith(f"{hub.url}/#code=") and hub.token not in url
    code = url.split("#code=", 1)[1]
    assert _login(hub, code=code).status_code == 204
    assert _login(hub, code=code).status_code == 401  # used
    assert _login(hub, code=mint_code(hub.token, now=time.time() - 300)).status_code == 401  # expired
    assert _login(hub, code=mint_code("another token")).status_code == 401  # not this hub's
    assert _login(hub, code=mint_code(hub.token)).status_code == 204


def test_hub_open_without_a_running_hub_says_so(tmp_path: Path) -> None:
    answer = subprocess.run(
        [sys.executable, "-m", "omniagent", "hub", "open", "--print", "--data-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=30, env=_env(),
    )  # fmt: skip
    assert answer.returncode == 1 and "no hub is running" in answer.stderr and answer.stdout == ""


def test_a_rotated_token_logs_every_page_out(tmp_path: Path) -> None:
    with hub_process(tmp_path) as hub:
        cookie = {"Cookie": _cookie(hub)} | _origin(hub)
        assert _upgrade(hub, cookie) == 101
        rotated = subprocess.run(
            [sys.executable, "-m", "omniagent", "hub", "token", "--rotate", "--data-dir", str(tmp_path)],
            capture_output=True, text=True, timeout=30, env=_env(),
        )  # fmt: skip
        assert rotated.returncode == 0
        assert _upgrade(hub, cookie) == 401
        assert httpx.get(f"{hub.url}/auth", headers=cookie).json() == {"logged_in": False}


def test_the_batch_is_served_read_only_and_nothing_outside_it(hub: HubProcess) -> None:
    cookie = {"Cookie": _cookie(hub)}
    first = httpx.get(f"{hub.url}/batch/", headers=cookie)
    assert first.status_code == 307 and first.headers["location"] == "/batch/report.html"
    report = httpx.get(f"{hub.url}/batch/report.html", headers=cookie)
    assert report.status_code == 200 and report.headers["content-type"].startswith("text/html")
    assert report.headers["content-security-policy"].startswith("sandbox allow-same-origin;")
    assert "script" not in report.headers["content-security-policy"]
    result = httpx.get(f"{hub.url}/batch/tasks/t1/omniagent/result.json", headers=cookie)
    assert result.json() == {"task": "t1"} and result.headers["content-type"] == "application/json"
    for name in ("diff.patch", "page.html"):  # an agent's file is text, never a page of the hub's origin
        served = httpx.get(f"{hub.url}/batch/tasks/t1/omniagent/{name}", headers=cookie)
        assert served.headers["content-type"] == "text/plain; charset=utf-8" and "<script>" in served.text
        assert served.headers["content-security-policy"].startswith("sandbox;")
    assert httpx.post(f"{hub.url}/batch/job.json", headers=cookie | _origin(hub)).status_code == 405
    for path in (
        "escape.txt",  # a link out of the folder
        ".hidden/x.txt",
        "../outside.txt",
        "%2e%2e/outside.txt",
        "tasks/..%2f..%2foutside.txt",
        "tasks//t1",
        "tasks",
        "tasks/t1/omniagent/missing.json",
        "..%5coutside.txt",
        f"..%2f..%2f{hub.url.rsplit(':', 1)[0]}",
    ):
        answer = httpx.get(f"{hub.url}/batch/{path}", headers=cookie)
        # 404 from the batch's route; 401 where the client made the path leave /batch/ (no route of the cookie's)
        assert answer.status_code in (401, 404), (path, answer.status_code)
        assert SECRET not in answer.text


def test_the_token_is_in_no_log_and_no_answer_after_all_that(hub: HubProcess) -> None:
    _cookie(hub)
    _login(hub, token="wrong")
    _hub_open(hub, "--print")
    log = hub.stderr()
    assert "page login refused" in log
    assert hub.token not in log and hub.token not in hub.banner


def _env() -> dict[str, str]:
    return os.environ | {"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}


def _hub_open(hub: HubProcess, *args: str) -> subprocess.CompletedProcess[str]:
    data_dir = hub.stderr_path.parent
    return subprocess.run(
        [sys.executable, "-m", "omniagent", "hub", "open", *args, "--data-dir", str(data_dir)],
        capture_output=True, text=True, timeout=30, env=_env(),
    )  # fmt: skip

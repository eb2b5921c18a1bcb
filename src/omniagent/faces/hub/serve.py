"""`omniagent hub`, the process: the hub's state in the data dir, its socket, hypercorn serving the app, until a
signal stops it (every session closed on the way out). `omniagent hub token` prints (or rotates) the token;
`omniagent hub open` opens the web page logged in (a one-time code in the URL's fragment).

It prints where it listens and where the token is to stdout, never the token itself; logs go to stderr.
Listening beyond loopback needs TLS (`--tls-cert`, `--tls-key`) or `--allow-remote`, which warns.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import signal
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from hypercorn.asyncio import serve
from hypercorn.config import Config

from omniagent.engine.config import engine_dirs
from omniagent.faces.hub.app import AcpFactory, SidecarEndpoint, build_app
from omniagent.faces.hub.guard import TokenFile
from omniagent.faces.hub.settings import LOOPBACK_NAMES, Limits, Listener
from omniagent.faces.hub.web.door import CODE_SECONDS, PageKeys, mint_code
from omniagent.faces.hub.web.results import BatchFiles
from omniagent.faces.hub.web.routes import Page
from omniagent.hub.hub import Hub, HubClient
from omniagent.hub.state import TOKEN_FILE, HubState
from omniagent.logs import configure, face_logger
from omniagent.runtime.runtime import MockScript, Runtime
from omniagent.wire.jsonrpc import Peer

EXIT_USAGE = 2
OPEN_FILE = "open.html"  # `omniagent hub open`'s page that forwards the browser to the login link
# Seconds hypercorn gives open requests at shutdown (the streams are ended before it waits).
GRACEFUL_SECONDS = 3.0


@dataclass(frozen=True, slots=True)
class Options:
    """What `omniagent hub` was asked for."""

    host: str
    port: int
    default_agent: str
    tls: tuple[Path, Path] | None
    allowed_hosts: frozenset[str]
    limits: Limits
    batch_dir: Path | None = None


def hub_folder(data_dir: Path | None) -> Path:
    """The hub's folder: `hub/` in the engine's data dir (`--data-dir`, else OMNIAGENT_DATA_DIR, else the user's)."""
    return engine_dirs(data_dir)[0] / "hub"


def run_hub(
    *,
    action: str | None,
    rotate: bool,
    host: str,
    port: int,
    agent: str | None,
    data_dir: Path | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    allow_remote: bool,
    allow_hosts: list[str],
    max_clients: int,
    mock: str | None,
    batch_dir: Path | None = None,
    print_url: bool = False,
) -> int:
    """Entry point of `omniagent hub` (and `omniagent hub token`, `omniagent hub open`); returns the exit code."""
    state = HubState(hub_folder(data_dir))
    if action == "token":
        print(state.rotate() if rotate else state.token())
        return 0
    if action == "open":
        return open_page(state, print_url=print_url)
    configure("hub")
    log = face_logger("hub")
    if batch_dir is not None and not batch_dir.is_dir():
        log.error("--batch-dir %s is not a folder", batch_dir)
        return EXIT_USAGE
    if (tls_cert is None) != (tls_key is None):
        log.error("--tls-cert and --tls-key go together")
        return EXIT_USAGE
    tls = (tls_cert, tls_key) if tls_cert is not None and tls_key is not None else None
    if not _loopback(host):
        if tls is None and not allow_remote:
            log.error("refusing to listen on %s without TLS: give --tls-cert and --tls-key (or --allow-remote)", host)
            return EXIT_USAGE
        if tls is None:
            log.warning("listening on %s without TLS: the token and every message cross the network in clear", host)
    script = _mock(mock, log)
    if mock is not None and script is None:
        return 1
    named = {host if ":" not in host or host.startswith("[") else f"[{host}]", *allow_hosts}
    options = Options(
        host=host,
        port=port,
        default_agent=agent or ("mock" if script is not None else "omniagent"),
        tls=tls,
        allowed_hosts=frozenset(name.lower() for name in named) | frozenset(LOOPBACK_NAMES),
        limits=Limits(max_clients=max_clients),
        batch_dir=batch_dir,
    )
    try:
        return asyncio.run(_serve(options, state, script))
    except KeyboardInterrupt:
        return 130


def _loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _mock(source: str | None, log: logging.Logger) -> MockScript | None:
    if source is None:
        return None
    from omniagent.runtime.adapters.mock import MockScriptError

    try:
        return Runtime.load_mock(source)
    except MockScriptError as exc:
        log.error("%s", exc)
        return None


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket (bound here, so port 0 can be told as the port it became)."""
    bare = host.strip("[]")
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit it: without it, an answer written in two parts waits on the client's delayed ACK
    # (hypercorn sets it only on sockets it binds itself, and this one is handed over by descriptor).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((bare, port))
    sock.listen(128)
    return sock


def _config(options: Options, sock: socket.socket) -> Config:
    config = Config()
    config.bind = [f"fd://{sock.detach()}"]  # hypercorn owns the descriptor from here
    config.accesslog = None
    config.errorlog = logging.getLogger("omniagent.hub.http")
    config.graceful_timeout = GRACEFUL_SECONDS
    config.websocket_max_message_size = options.limits.max_body_bytes
    # No WebSocket pings: hypercorn 0.18 keeps each closed WebSocket's connection alive until its next ping is due,
    # which held ~100 KB per closed connection for the whole interval (docs/performance.md, "Hub").
    config.include_server_header = False
    if options.tls is not None:
        config.certfile, config.keyfile = (str(path) for path in options.tls)
    return config


async def _serve(options: Options, state: HubState, script: MockScript | None) -> int:
    log = face_logger("hub")
    try:
        sock = _bind(options.host, options.port)
    except OSError as exc:
        log.error("cannot listen on %s:%d: %s", options.host, options.port, exc.strerror or exc)
        return 1
    port = sock.getsockname()[1]
    state.token()  # made on first start, so a client can read it before its first request
    listener = Listener(port=port, tls=options.tls is not None, hosts=options.allowed_hosts)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    token = TokenFile(state.folder / TOKEN_FILE)
    page = Page(
        PageKeys(token, port=port, secure=options.tls is not None),
        BatchFiles(options.batch_dir) if options.batch_dir is not None else None,
    )
    async with Hub.start(state=state, mock=script) as hub:
        app = build_app(
            hub,
            listener=listener,
            token=token,
            default_agent=options.default_agent,
            acp=acp_factory(state.folder.parent),
            limits=options.limits,
            sidecar=sidecar_endpoint(),
            page=page,
        )
        base = _announce(options, listener, state)
        state.write_address(base)

        async def stopping() -> None:
            await stop.wait()
            await app.registry.aclose()  # streams end, so hypercorn need not wait for them

        try:
            await serve(app.asgi, _config(options, sock), shutdown_trigger=stopping)  # type: ignore[arg-type]
        finally:
            state.forget_address(base)
    return 0


def _announce(options: Options, listener: Listener, state: HubState) -> str:
    """Where to reach the hub and how to authenticate: stdout, for a person or the program that started it.
    Returns the base URL."""
    host = options.host if ":" not in options.host or options.host.startswith("[") else f"[{options.host}]"
    base = f"{listener.scheme}://{host}:{listener.port}"
    ws = "wss" if listener.tls else "ws"
    batch = f"; a batch's report: {base}/batch/" if options.batch_dir is not None else ""
    print(
        f"omniagent hub listening on {base}\n"
        f"  web page: {base}/  (log in with the token, or `omniagent hub open`{batch})\n"
        f"  ACP (streamable HTTP and WebSocket): {base}/acp  (a session's agent: {base}/acp/AGENT;"
        f" default {options.default_agent})\n"
        f"  sidecar wire (WebSocket): {ws}://{host}:{listener.port}/sidecar\n"
        f"  authenticate with 'Authorization: Bearer TOKEN'; the token is in {state.folder / TOKEN_FILE}"
        " (`omniagent hub token` prints it)",
        flush=True,
    )
    sys.stdout.flush()
    return base


def open_page(state: HubState, *, print_url: bool) -> int:
    """`omniagent hub open`: the running hub's page, logged in by a one-time code in the URL's fragment (never
    sent to a server, so in no request line or log). Opened in a browser through a file of the hub's folder (0600)
    that forwards to it, so the code is not on the browser's command line; printed instead with `--print`, or when
    no browser opens."""
    base = state.address()
    if base is None:
        print("omniagent hub open: no hub is running on this data dir (start `omniagent hub`)", file=sys.stderr)
        return 1
    url = f"{base}/#code={mint_code(state.token())}"
    if not print_url:
        import html
        import webbrowser

        forward = state.folder / OPEN_FILE
        state.write_file(OPEN_FILE, f'<!doctype html><meta http-equiv="refresh" content="0;url={html.escape(url)}">\n')
        if webbrowser.open(forward.as_uri()):
            print(f"opened {base}/ in a browser (a login link that works once, for {int(CODE_SECONDS)} s)")
            return 0
    print(url)
    return 0


def acp_factory(data_dir: Path) -> AcpFactory:
    """The ACP agent side of each connection: `serving/acp`'s `AcpAgent`, its `initialize` saying what the
    connection's agent is (`data_dir`: where our engine's keys are looked up)."""
    from omniagent.serving.acp.connection import AcpAgent
    from omniagent.serving.acp.handshake import AgentFacts, Handshake

    def bind(peer: Peer, client: HubClient, agent: str, attach: str | None) -> AcpAgent:
        return AcpAgent(peer, client, handshake=Handshake(AgentFacts(agent, data_dir)), attach_to=attach)

    return bind


def sidecar_endpoint() -> SidecarEndpoint | None:
    """The `/sidecar` endpoint: `faces/hub/sidecar.py`'s."""
    from omniagent.faces.hub.sidecar import sidecar_endpoint as endpoint

    return endpoint

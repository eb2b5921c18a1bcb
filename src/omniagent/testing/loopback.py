"""The HTTP server under every fake of this package: bound on 127.0.0.1, served by a daemon thread, started and
stopped with `with` or `async with`."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self

STOP_JOIN_TIMEOUT = 5.0  # seconds to wait for the serving thread when stopping
POLL_INTERVAL = 0.02  # seconds between shutdown checks of serve_forever; its 0.5 s default slows every test


class QuietHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server whose handler threads never delay its close, and which takes a client hanging up
    mid-answer (a test cancelling, timing out) for the normal event it is, not a server fault."""

    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: object, client_address: object) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


class QuietHandler(BaseHTTPRequestHandler):
    """A fake's request handler: HTTP/1.1, nothing logged per request (the fakes keep their own records), and GET
    and POST both answered by `_handle(method)`."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        """Silent: the fake's own record is the log."""

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def _handle(self, method: str) -> None:
        raise NotImplementedError


class LoopbackServer:
    """A fake server's life: `start` binds 127.0.0.1 (`port` 0: an ephemeral one) and serves in a daemon thread,
    `stop` ends it and wakes whatever waits on `_lock` or `stopping`. Subclasses say how requests are handled."""

    thread_name = "fake-server"

    def __init__(self, *, port: int = 0) -> None:
        self._port = port
        self._lock = threading.Condition()
        self.stopping = threading.Event()  # set by `stop`: scripted waits in handler threads end at once
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def _server(self, address: tuple[str, int]) -> ThreadingHTTPServer:
        """The HTTP server to bind at `address`."""
        return QuietHTTPServer(address, self._handler())

    def _handler(self) -> Callable[..., BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        """The server origin, e.g. `http://127.0.0.1:54321`."""
        assert self._httpd is not None, "the server is not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> None:
        """Bind on 127.0.0.1 and serve in a daemon thread."""
        self._httpd = self._server(("127.0.0.1", self._port))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(POLL_INTERVAL,), name=self.thread_name, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving; scripted delays and waits in flight end at once."""
        self.stopping.set()
        with self._lock:
            self._lock.notify_all()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(STOP_JOIN_TIMEOUT)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return self.__enter__()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

"""A small HTTP server on 127.0.0.1 for the `fetch` tests: fixed answers per path, and the requests it saw."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Answer = tuple[int, dict[str, str], bytes]  # status, headers, body


@dataclass
class Pages:
    """What the server answers per path (404 `missing` otherwise), what it saw (path and headers), its port."""

    answers: dict[str, Answer] = field(default_factory=dict)
    seen: list[dict[str, str]] = field(default_factory=list)
    port: int = 0

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


@contextlib.contextmanager
def serving(answers: dict[str, Answer] | None = None) -> Iterator[Pages]:
    """Serve `answers` until the block ends."""
    pages = Pages(dict(answers or {}))

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return None

        def do_GET(self) -> None:
            pages.seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
            status, headers, body = pages.answers.get(self.path, (404, {"content-type": "text/plain"}, b"missing"))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(ConnectionError):  # the client stopped reading at its size limit
                self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    pages.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield pages
    finally:
        server.shutdown()
        server.server_close()

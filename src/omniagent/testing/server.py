"""The fake LLM server: real HTTP on 127.0.0.1 speaking Anthropic, OpenAI Chat, OpenAI Responses and Gemini.

A `ThreadingHTTPServer` in a daemon thread answers each request with the next scripted step of its `Scenario` and
records the request (auth header values replaced by a fingerprint). Streams use chunked transfer encoding, so a cut
mid-stream is a broken body to the client, as with a real provider, not a clean end.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from omniagent.testing.frames import Renderer
from omniagent.testing.loopback import LoopbackServer, QuietHandler, QuietHTTPServer
from omniagent.testing.prompt_cache import CacheRefusal, PromptCache
from omniagent.testing.render.accounts import CHATGPT_USAGE_PATHS, chatgpt_usage
from omniagent.testing.render.anthropic import AnthropicRenderer
from omniagent.testing.render.gemini import GeminiRenderer
from omniagent.testing.render.openai import ChatRenderer, ResponsesRenderer
from omniagent.testing.scenario import Drop, ErrorReply, RawReply, Reply, Scenario, Step

AUTH_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key", "proxy-authorization", "cookie"})
_RENDERERS: dict[str, Renderer] = {
    "anthropic": AnthropicRenderer(),
    "openai_chat": ChatRenderer(),
    "openai_responses": ResponsesRenderer(),
    "gemini": GeminiRenderer(),
}


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received. `credential` is the SHA-256 hex of the key sent (never the key itself)."""

    method: str
    path: str
    query: str
    api: str
    headers: dict[str, str]
    credential: str | None
    body: object

    def to_json(self) -> dict[str, object]:
        """The record as a JSON-ready dict (the `--log` line format)."""
        return asdict(self)


def fingerprint(secret: str) -> str:
    """The fingerprint the server records for a credential (SHA-256 hex of the bare key)."""
    return hashlib.sha256(secret.encode()).hexdigest()


class FakeLLMServer(LoopbackServer):
    """A scripted LLM provider on loopback. Use as `with FakeLLMServer(scenario) as llm:` (or `async with`).

    `url` is the origin (`http://127.0.0.1:PORT`); point Anthropic clients at `url` (SDK convention) or
    `url + "/v1"` (providers.json convention), OpenAI clients at `openai_base_url`, Gemini at `url`.
    """

    thread_name = "fake-llm"

    def __init__(self, scenario: Scenario | None = None, *, port: int = 0, log_path: Path | None = None) -> None:
        super().__init__(port=port)
        self.scenario = scenario or Scenario()
        self._log_path = log_path
        self._requests: list[RecordedRequest] = []
        self._held: set[str] = set()  # gates a stream is waiting at now
        self._released: set[str] = set()
        self.prompt_cache = PromptCache()

    def _server(self, address: tuple[str, int]) -> ThreadingHTTPServer:
        return _HTTPServer(address, _Handler, self)

    @property
    def openai_base_url(self) -> str:
        """Base URL for OpenAI-style clients and providers.json entries (`…/v1`)."""
        return self.url + "/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def enqueue(self, *steps: Step) -> None:
        """Append steps to the scenario queue."""
        with self._lock:
            self.scenario.steps.extend(steps)

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least `count` requests arrived (or `timeout` seconds passed); returns the snapshot."""
        with self._lock:
            self._lock.wait_for(lambda: len(self._requests) >= count, timeout)
            return list(self._requests)

    async def wait_for_requests_async(self, count: int, within: float = 5.0) -> list[RecordedRequest]:
        """`wait_for_requests` without blocking the event loop (`within` seconds at most)."""
        return await asyncio.to_thread(self.wait_for_requests, count, within)

    def wait_held(self, gate: str, timeout: float = 5.0) -> bool:
        """Block until a stream waits at `gate` (or `timeout` seconds passed); returns whether one does."""
        with self._lock:
            return self._lock.wait_for(lambda: gate in self._held, timeout)

    async def wait_held_async(self, gate: str, within: float = 5.0) -> bool:
        """`wait_held` without blocking the event loop (`within` seconds at most)."""
        return await asyncio.to_thread(self.wait_held, gate, within)

    def release(self, gate: str) -> None:
        """Let the streams held at `gate` (and any that reach it later) go on."""
        with self._lock:
            self._released.add(gate)
            self._lock.notify_all()

    # -- called from handler threads ------------------------------------------------------------------------------

    def take_step(self, raw_body: str) -> Step:
        """The step answering a request with this body (see `scenario.Step` for the selection rule)."""
        with self._lock:
            for position, step in enumerate(self.scenario.steps):
                if step.match is None or step.match in raw_body:
                    if not step.sticky:
                        del self.scenario.steps[position]
                    return step
            return self.scenario.fallback

    def hold(self, gate: str) -> bool:
        """Wait at `gate` until it is released; False when the server stopped first."""
        with self._lock:
            self._held.add(gate)
            self._lock.notify_all()
            self._lock.wait_for(lambda: gate in self._released or self.stopping.is_set())
            self._held.discard(gate)
            return not self.stopping.is_set()

    def record(self, request: RecordedRequest) -> None:
        """Store a request (and append it to the log file) and wake waiters."""
        with self._lock:
            self._requests.append(request)
            if self._log_path is not None:
                with self._log_path.open("a", encoding="utf-8") as log:
                    log.write(json.dumps(request.to_json()) + "\n")
            self._lock.notify_all()


class _HTTPServer(QuietHTTPServer):
    def __init__(self, address: tuple[str, int], handler: Callable[..., _Handler], owner: FakeLLMServer) -> None:
        super().__init__(address, handler)
        self.owner = owner


class _Handler(QuietHandler):
    server: _HTTPServer

    def _handle(self, method: str) -> None:
        owner = self.server.owner
        split = urlsplit(self.path)
        raw = self.rfile.read(int(self.headers.get("content-length") or 0)).decode("utf-8", "replace")
        try:
            body: object = json.loads(raw) if raw else None
        except ValueError:
            body = None
        api, model = _route(method, split.path)
        recorded = _recorded(method, split.path, split.query, api, dict(self.headers.items()), body)
        owner.record(recorded)
        if api in _RENDERERS:
            request = dict(body) if isinstance(body, dict) else {}
            if model:
                request["model"] = model
            step = owner.take_step(raw)
            if owner.scenario.prompt_cache and isinstance(step, Reply):
                try:
                    usage = owner.prompt_cache.usage(api, request, recorded.credential, step.usage)
                except CacheRefusal as refusal:
                    step = ErrorReply(400, "invalid_request_error", message=str(refusal))
                else:
                    step = replace(step, usage=usage)
            self._answer(owner, _RENDERERS[api], step, request, _wants_stream(api, split.path, body))
        elif api == "models":
            self._json(200, _models(owner.scenario.models, split.path, "anthropic-version" in self.headers))
        elif api == "chatgpt_usage":
            quota = owner.scenario.plan_quota
            if quota is None:
                self._json(404, {"error": {"type": "not_found_error", "message": "no plan quota in the scenario"}})
            else:
                self._json(200, chatgpt_usage(quota))
        elif api == "count_tokens":
            tokens = max(len(raw) // 4, 1)
            self._json(200, {"totalTokens": tokens} if ":countTokens" in split.path else {"input_tokens": tokens})
        else:
            self._json(404, {"error": {"type": "not_found_error", "message": f"no fake route for {split.path}"}})

    def _answer(
        self, owner: FakeLLMServer, renderer: Renderer, step: Step, request: dict[str, object], stream: bool
    ) -> None:
        if step.delay and owner.stopping.wait(step.delay):
            return
        if isinstance(step, Drop):
            self.close_connection = True
            return
        if isinstance(step, RawReply):
            self._raw(step)
            return
        if isinstance(step, ErrorReply):
            headers = dict(step.headers)
            # Gemini says how long to wait in the error body (its renderer), never in a header.
            if step.retry_after is not None and not isinstance(renderer, GeminiRenderer):
                headers["retry-after"] = f"{step.retry_after:g}"
            if step.retry_after_ms is not None:
                headers["retry-after-ms"] = str(step.retry_after_ms)
            self._json(step.status, renderer.error_body(step), headers)
            return
        if not stream:
            self._json(200, renderer.whole(step, request), step.headers)
            return
        self._stream(owner, renderer, step, request)

    def _stream(self, owner: FakeLLMServer, renderer: Renderer, reply: Reply, request: dict[str, object]) -> None:
        events = renderer.stream(reply, request)
        if reply.end_after_events is not None:
            events = events[: reply.end_after_events]
        if reply.error_event is not None:
            events = [e for e in events if not _is_terminal(e)] + [
                renderer.stream_error(reply.error_event, reply.error_message)
            ]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("connection", "close")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.close_connection = True
        for number, event in enumerate(events):
            if reply.cut_after_events is not None and number >= reply.cut_after_events:
                return  # no terminating chunk: the client sees a broken body
            if reply.stall_after_events is not None and number >= reply.stall_after_events:
                self.wfile.flush()
                owner.stopping.wait()  # silence with the connection open, until the server stops
                return
            if reply.gate is not None and number == reply.hold_after_events:
                self.wfile.flush()
                if not owner.hold(reply.gate):
                    return
            if reply.chunk_delay and owner.stopping.wait(reply.chunk_delay):
                return
            data = event.encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _raw(self, step: RawReply) -> None:
        data = step.body.encode()
        self.send_response(step.status)
        self.send_header("content-type", step.content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _json(self, status: int, body: object, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


def _route(method: str, path: str) -> tuple[str, str]:
    """(api, model-from-URL) for a request path; query strings are ignored (Claude Code adds `?beta=true`)."""
    if method == "GET":
        if path.endswith(CHATGPT_USAGE_PATHS):
            return "chatgpt_usage", ""
        return ("models" if path.rstrip("/").endswith("/models") else "unknown"), ""
    if path.endswith("/messages/count_tokens") or path.endswith(":countTokens"):
        return "count_tokens", ""
    if path.endswith("/messages"):
        return "anthropic", ""
    if path.endswith("/chat/completions"):
        return "openai_chat", ""
    if path.endswith("/responses"):
        return "openai_responses", ""
    if ":streamGenerateContent" in path or ":generateContent" in path:
        return "gemini", path.rsplit("/", 1)[-1].split(":", 1)[0]
    return "unknown", ""


def _wants_stream(api: str, path: str, body: object) -> bool:
    if api == "gemini":
        return ":streamGenerateContent" in path
    return isinstance(body, dict) and body.get("stream") is True


def _is_terminal(event: str) -> bool:
    markers = (
        "message_delta",
        "message_stop",
        "[DONE]",
        "response.completed",
        "response.incomplete",
        'finish_reason":"',
        '"finishReason"',
    )
    return any(marker in event for marker in markers)


def _recorded(method: str, path: str, query: str, api: str, headers: dict[str, str], body: object) -> RecordedRequest:
    lowered = {name.lower(): value for name, value in headers.items()}
    credential = None
    for name in ("x-api-key", "x-goog-api-key", "api-key", "authorization"):
        if name in lowered:
            credential = fingerprint(lowered[name].removeprefix("Bearer ").strip())
            break
    kept = {name: value for name, value in lowered.items() if name not in AUTH_HEADERS}
    return RecordedRequest(method, path, query, api, kept, credential, body)


def _models(models: tuple[str, ...], path: str, anthropic: bool) -> dict[str, object]:
    if "/v1beta/" in path:
        listed = [
            {
                "name": f"models/{m}",
                "displayName": m,
                "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"],
            }
            for m in models
        ]
        return {"models": listed}
    if anthropic:
        data = [{"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"} for m in models]
        return {
            "data": data,
            "has_more": False,
            "first_id": models[0] if models else None,
            "last_id": models[-1] if models else None,
        }
    return {
        "object": "list",
        "data": [{"id": m, "object": "model", "created": 1_700_000_000, "owned_by": "fake"} for m in models],
    }

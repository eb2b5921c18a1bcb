"""Scenarios for the fake LLM server, as data: a queue of scripted steps, each a reply, an error or a dropped line.

A scenario file is JSON: `{"steps": [...], "fallback": {...}?, "models": [...]?, "plan_quota": {...}?,
"prompt_cache": true?}`; each
step is an object with a `"kind"` of `reply`, `error`, `drop` or `raw` and the fields of the matching dataclass
below (`tool_calls` as a list of `{"name", "arguments", "call_id"?}`, `usage` as `{"input", "output", ...}`). See
docs/testing.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Literal

Stop = Literal["stop", "length", "tool_calls", "refusal", "content_filter"]


@dataclass(frozen=True, slots=True)
class FakeUsage:
    """Token counts to report; `input` includes the cache subsets (yuke convention), renderers convert per API."""

    input: int = 12
    output: int = 7
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0


@dataclass(frozen=True, slots=True)
class FakeToolCall:
    """A tool call to stream. `arguments` is JSON text (streamed in pieces) or an object (encoded first)."""

    name: str
    arguments: str | dict[str, object] = "{}"
    call_id: str = ""

    def arguments_json(self) -> str:
        """The arguments as JSON text."""
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass(frozen=True, slots=True)
class Reply:
    """A successful answer (streamed or whole, as the client asked).

    Order inside the answer: redacted reasoning, reasoning, text, tool calls. `chunk_size` splits text, reasoning and
    tool arguments into deltas of that many characters. `cut_after_events` closes the connection after that many
    SSE events, breaking the chunked body (a network error to the client); `end_after_events` ends the body
    cleanly after that many events, without the terminal events (a truncated stream); `error_event` replaces the
    terminal events with a mid-stream error of that provider error type (e.g. `overloaded_error`), saying
    `error_message`;
    `stall_after_events` sends that many events (0: only the status line and headers) and then nothing, keeping
    the connection open until the client gives up or the server stops (an idle stream). `delay` waits
    before the status line, `chunk_delay` between events (seconds). `headers` are extra response headers (e.g. a
    provider's rate-limit headers, which some agents read and report). `match`/`sticky`: see `Step`.

    `gate` holds the stream at a named gate after `hold_after_events` events (default 1) until the test calls
    `FakeLLMServer.release(gate)`; `FakeLLMServer.wait_held(gate)` returns once a stream is held there. Use it, not
    `chunk_delay`, when a test must act while a reply is streaming: it waits for exactly as long as it must.
    """

    text: str = ""
    reasoning: str = ""
    signature: str = "fake-signature"
    redacted_reasoning: str | None = None
    tool_calls: tuple[FakeToolCall, ...] = ()
    stop: Stop | None = None
    usage: FakeUsage = field(default_factory=FakeUsage)
    chunk_size: int = 5
    cut_after_events: int | None = None
    end_after_events: int | None = None
    error_event: str | None = None
    error_message: str = "fake stream error"
    stall_after_events: int | None = None
    delay: float = 0.0
    chunk_delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    match: str | None = None
    sticky: bool = False
    gate: str | None = None
    hold_after_events: int = 1

    def stop_reason(self) -> Stop:
        """The stop reason to report: explicit, else tool_calls when calling tools, else stop."""
        return self.stop or ("tool_calls" if self.tool_calls else "stop")


@dataclass(frozen=True, slots=True)
class ErrorReply:
    """An HTTP error answer with the provider's error body. `retry_after` (seconds) sets the `retry-after` header
    (on Gemini, a `RetryInfo` detail in the body instead, as that API says it)."""

    status: int
    error_type: str = ""
    code: str = ""
    message: str = "fake error"
    retry_after: float | None = None
    retry_after_ms: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    match: str | None = None
    sticky: bool = False


@dataclass(frozen=True, slots=True)
class RawReply:
    """An answer that is not the provider's protocol: `status`, `content_type` and `body` as given (a captive portal's
    `200 text/html` login page, a proxy's error page)."""

    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    body: str = "<html><body><h1>Sign in to the guest network</h1></body></html>"
    delay: float = 0.0
    match: str | None = None
    sticky: bool = False


@dataclass(frozen=True, slots=True)
class Drop:
    """Close the connection without sending any status line."""

    delay: float = 0.0
    match: str | None = None
    sticky: bool = False


Step = Reply | ErrorReply | Drop | RawReply
"""Step selection: the first queued step whose `match` (a substring of the request body JSON, or None for any) fits
is used and removed from the queue, unless it is `sticky` (then it answers every matching request)."""


@dataclass(frozen=True, slots=True)
class QuotaWindow:
    """One plan-quota window: `used_percent` of it used, `minutes` long, resetting `resets_in` seconds after the
    request that asks."""

    used_percent: float
    minutes: int
    resets_in: int


@dataclass(frozen=True, slots=True)
class PlanQuota:
    """A subscription's quota windows, as the account backend of a logged-in agent reports them (the ChatGPT
    backend's usage route, which `codex app-server` reads for `account/rateLimits/read`). The first window is the
    primary one, the second the secondary one."""

    plan: str = "plus"
    windows: tuple[QuotaWindow, ...] = (QuotaWindow(42, 300, 11520), QuotaWindow(7, 10080, 302400))


EXHAUSTED = ErrorReply(500, "api_error", "scenario_exhausted", "the fake LLM scenario has no step left")


@dataclass(slots=True)
class Scenario:
    """A queue of steps plus what to answer once it is empty, the model ids `GET …/models` lists, and the plan
    quota the account routes report (None: those routes answer 404, as for a login without a plan).

    `prompt_cache`: each reply's input, cache-read and cache-write tokens are computed from the request against
    the prefixes earlier requests cached, as each API does (`prompt_cache.py`); only its output counts are kept.
    """

    steps: list[Step] = field(default_factory=list)
    fallback: Step = EXHAUSTED
    models: tuple[str, ...] = ("fake-model",)
    plan_quota: PlanQuota | None = None
    prompt_cache: bool = False

    @classmethod
    def from_json(cls, value: object) -> Scenario:
        """Build a scenario from decoded JSON (see the module docstring). Raises ValueError on a bad shape."""
        if not isinstance(value, dict):
            raise ValueError("a scenario is a JSON object")
        steps = [step_from_json(step) for step in value.get("steps", [])]
        fallback = step_from_json(value["fallback"]) if "fallback" in value else EXHAUSTED
        models = tuple(str(model) for model in value.get("models", ["fake-model"]))
        quota = plan_quota_from_json(value["plan_quota"]) if "plan_quota" in value else None
        cache = value.get("prompt_cache", False)
        if not isinstance(cache, bool):
            raise ValueError('"prompt_cache" is true or false')
        return cls(steps=steps, fallback=fallback, models=models, plan_quota=quota, prompt_cache=cache)

    @classmethod
    def load(cls, path: str | Path) -> Scenario:
        """Read a scenario JSON file."""
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


def step_from_json(value: object) -> Step:
    """One step from its JSON object. Raises ValueError on an unknown kind or field."""
    if not isinstance(value, dict):
        raise ValueError("a scenario step is a JSON object")
    data = dict(value)
    kind = data.pop("kind", "reply")
    step_type: type[Step] = {"reply": Reply, "error": ErrorReply, "drop": Drop, "raw": RawReply}.get(kind)  # type: ignore[assignment]
    if step_type is None:
        raise ValueError(f"unknown scenario step kind {kind!r}")
    known = {f.name for f in fields(step_type)}
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"unknown fields for a {kind} step: {sorted(unknown)}")
    if "tool_calls" in data:
        data["tool_calls"] = tuple(FakeToolCall(**call) for call in data["tool_calls"])
    if "usage" in data:
        data["usage"] = FakeUsage(**data["usage"])
    return step_type(**data)


def plan_quota_from_json(value: object) -> PlanQuota:
    """A plan quota from `{"plan": …, "windows": [{"used_percent", "minutes", "resets_in"}, …]}`. Raises ValueError
    (or TypeError for an unknown window field) on a bad shape."""
    if not isinstance(value, dict) or not set(value) <= {"plan", "windows"}:
        raise ValueError('a plan quota is a JSON object with "plan" and "windows"')
    windows = tuple(QuotaWindow(**window) for window in value.get("windows", []))
    return PlanQuota(plan=str(value.get("plan", "plus")), windows=windows)

"""Provider-neutral request IR and the closed vocabulary of streamed answer events.

This is the seam between the run loop (`engine.run.executor`) and the provider clients (`clients/anthropic.py`,
`clients/openai_chat.py`, `clients/openai_responses.py`). The run loop builds a `ModelRequest`, calls
`Provider.stream()`, and consumes `StreamEvent`s.

Stream contract (every provider keeps it; tests pin it):
- Content arrives in *blocks* numbered by `index` = 0, 1, 2, … in order of appearance. At most one block is open at a
  time: a block opens with its first event (`TextDelta`, `ReasoningDelta`, `RedactedReasoning` or `ToolCallStarted`)
  and closes with `BlockEnded(index)`; every opened block is closed before `StreamEnd`. An opening delta may be
  empty (`TextDelta(i, "")`): it announces the block.
- A block is one kind only: text (`TextDelta`*), reasoning (`ReasoningDelta`* then at most one
  `ReasoningSignature`), redacted reasoning (one `RedactedReasoning`), or a tool call (`ToolCallStarted`, then
  `ToolCallArgumentsDelta`*; the joined deltas are the raw JSON arguments, `""` meaning `{}`).
- Exactly one `Usage` comes right before `StreamEnd` (zeros when the provider reported none), and `StreamEnd` is the
  last event. A stream that cannot finish raises `ProviderError` instead; `content_streamed` then says whether any
  block event had been yielded (after which the attempt must not be retried).
- Usage follows the yuke convention: `input_tokens` includes the cache subsets `cache_read_tokens` and
  `cache_write_tokens`; `reasoning_tokens` is a subset of `output_tokens`.

Reasoning signatures are opaque per protocol: replay a `ReasoningPart` only to the protocol that produced it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal, Protocol

from omniagent.errors import OmniagentError

# ---------------------------------------------------------------------------------------------------------------------
# Request side


@dataclass(frozen=True, slots=True)
class TextPart:
    """Plain text, in a user or assistant message."""

    text: str


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An inline image in a user message (base64 of the raw bytes)."""

    media_type: str
    data_base64: str


@dataclass(frozen=True, slots=True)
class ReasoningPart:
    """Model reasoning replayed in an assistant message, unchanged from how it streamed.

    `signature` is the provider's proof of authenticity (Anthropic thinking signature, OpenAI Responses encrypted
    reasoning); `redacted` is opaque provider data of a redacted reasoning block (then `text` is empty).
    """

    text: str
    signature: str | None = None
    redacted: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """A tool call the assistant made; `arguments_json` is the raw JSON text as streamed."""

    call_id: str
    name: str
    arguments_json: str


@dataclass(frozen=True, slots=True)
class ToolResultPart:
    """The result of a tool call. It belongs in a `user` message right after the assistant message that called it."""

    call_id: str
    output: str
    is_error: bool = False


RequestPart = TextPart | ImagePart | ReasoningPart | ToolCallPart | ToolResultPart


@dataclass(frozen=True, slots=True)
class Message:
    """One conversation message. Users send text, images and tool results; assistants text, reasoning, tool calls."""

    role: Literal["user", "assistant"]
    parts: tuple[RequestPart, ...]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the model may call; `input_schema` is a JSON Schema object."""

    name: str
    description: str
    input_schema: dict[str, object]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """Everything one model call needs, independent of the provider wire.

    `model` is the upstream model id sent to the provider. `reasoning_effort` is a catalog reasoning level
    (`minimal`, `low`, `medium`, `high`, `xhigh`, `max`) or None for the provider's default / no reasoning.
    `cache_key` names the conversation the request continues (the session), for providers that route prompt-cache
    lookups by a key (OpenAI's `prompt_cache_key`); every request of one session carries the same.
    """

    model: str
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_output_tokens: int = 8192
    reasoning_effort: str | None = None
    cache_key: str | None = None


# ---------------------------------------------------------------------------------------------------------------------
# Stream side: a closed vocabulary (see the module docstring for the ordering contract)


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of answer text for text block `index`."""

    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of reasoning text (or reasoning summary) for reasoning block `index`."""

    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningSignature:
    """The signature of reasoning block `index`; store it to replay the block. Comes at most once, before its end."""

    index: int
    signature: str


@dataclass(frozen=True, slots=True)
class RedactedReasoning:
    """A whole redacted reasoning block: opaque `data` to replay unchanged."""

    index: int
    data: str


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """Tool-call block `index` opened: the model calls `name`, answerable by `call_id`."""

    index: int
    call_id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallArgumentsDelta:
    """A piece of the raw JSON arguments of tool-call block `index`."""

    index: int
    call_id: str
    delta: str


@dataclass(frozen=True, slots=True)
class BlockEnded:
    """Block `index` is complete (text, reasoning, redacted reasoning or tool call)."""

    index: int


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of the whole call, yuke convention: input includes the cache subsets."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


StopReason = Literal["stop", "length", "content_filter", "refusal", "tool_calls", "unknown"]
"""Why the model stopped, already in yuke `StopReason` values (`canceled`/`error` are the run loop's to decide)."""


@dataclass(frozen=True, slots=True)
class StreamEnd:
    """The answer is complete. Always the last event of a successful stream."""

    stop_reason: StopReason


StreamEvent = (
    TextDelta
    | ReasoningDelta
    | ReasoningSignature
    | RedactedReasoning
    | ToolCallStarted
    | ToolCallArgumentsDelta
    | BlockEnded
    | Usage
    | StreamEnd
)

# ---------------------------------------------------------------------------------------------------------------------
# Errors and the seam


class RunErrorCode(StrEnum):
    """The yuke wire's `RunErrorCode` values; the values are the wire strings."""

    INTERRUPTED = "interrupted"
    PROVIDER = "provider"
    PROTOCOL = "protocol"
    NETWORK = "network"
    TIMEOUT = "timeout"
    RATE_LIMITED = "rate_limited"
    QUOTA_EXHAUSTED = "quota_exhausted"
    AUTH = "auth"
    UNKNOWN_MODEL = "unknown_model"
    UNSUPPORTED_REASONING = "unsupported_reasoning"
    MAX_ROUNDS = "max_rounds"
    CONTEXT_OVERFLOW = "context_overflow"
    RUNTIME = "runtime"
    INTERNAL = "internal"


class ProviderError(OmniagentError):
    """A model call failed. `str(error)` is a safe sentence: ours, then at most the provider's own error message,
    redacted and bounded (`failures.provider_words`); never a key.

    Attributes:
        code: the yuke RunErrorCode for `run.done{failed}` and `retrying` activity.
        status: the HTTP status, when there was one.
        retry_after: seconds the server asked to wait (`retry-after` / `retry-after-ms`), when it asked.
        retryable: whether the failure class allows another attempt at all (see `retry.next_delay`).
        content_streamed: whether block events were already yielded on this attempt (then never retry).
    """

    def __init__(
        self,
        code: RunErrorCode,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        retryable: bool = False,
        content_streamed: bool = False,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.retryable = retryable
        self.content_streamed = content_streamed

    def __repr__(self) -> str:
        return (
            f"ProviderError(code={self.code.value!r}, status={self.status!r}, retry_after={self.retry_after!r}, "
            f"retryable={self.retryable!r}, content_streamed={self.content_streamed!r}, message={self.message!r})"
        )


class Provider(Protocol):
    """One provider endpoint with its credential, able to stream model answers (`resolve.open_provider` builds it).

    Consume `stream()` with `contextlib.aclosing` (or to completion): closing the generator early closes the HTTP
    response, which is how a run cancels a call.
    """

    def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        """Send `request` and yield the answer as neutral events, ending with `Usage` then `StreamEnd`.

        Raises:
            ProviderError: on any failure (HTTP status, transport, timeout, malformed or truncated stream).
        """
        ...

    async def aclose(self) -> None:
        """Release the HTTP connection pool."""
        ...

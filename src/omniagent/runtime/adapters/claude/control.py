"""Claude Code's control protocol over stream-json: our `control_request`s and their responses, and the answers we
give to the CLI's own requests (`can_use_tool`).

Shapes observed with claude 2.1.197: a request is `{"type":"control_request","request_id":R,"request":{"subtype":…}}`
and its answer `{"type":"control_response","response":{"subtype":"success"|"error","request_id":R,"response"?:…,
"error"?:…}}`, in both directions. The CLI echoes every control_response we send back on its stdout; an echo carries
an id we never used, so it resolves nothing. `set_model` and `set_permission_mode` answer success for any value.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Mapping
from typing import Any

from omniagent.protocols.sidecar.commands import (
    Answer,
    ChoicesAnswer,
    PermissionAnswer,
    QuestionsAnswer,
    TextAnswer,
)
from omniagent.protocols.sidecar.events import PermissionChoice
from omniagent.wire.errors import WireError

# The message a denied or cancelled tool use carries back to the model.
DENIED = "The user denied this tool use."
CANCELLED = "The user cancelled this turn."
DECLINED_QUESTION = "The user declined to answer."


class ControlFailed(WireError):
    """The CLI answered a control request with an error, or went away before answering."""


class ControlChannel:
    """Our outgoing control requests, each awaiting the response that names its id."""

    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self._write = write
        self._ids = itertools.count(1)
        self._waiting: dict[str, asyncio.Future[Mapping[str, Any]]] = {}
        self._gone: str | None = None

    async def request(self, subtype: str, **fields: Any) -> Mapping[str, Any]:
        """Send one request and wait for its response body. Raises `ControlFailed`."""
        if self._gone is not None:
            raise ControlFailed(self._gone)
        request_id = f"req_{next(self._ids)}"
        future: asyncio.Future[Mapping[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        try:
            self._write(
                {"type": "control_request", "request_id": request_id, "request": {"subtype": subtype, **fields}}
            )
            return await future
        finally:
            self._waiting.pop(request_id, None)

    def resolve(self, response: Mapping[str, Any]) -> None:
        """A `control_response` body from the CLI; ids we are not waiting for (echoes) are ignored."""
        future = self._waiting.get(str(response.get("request_id")))
        if future is None or future.done():
            return
        if response.get("subtype") == "success":
            body = response.get("response")
            future.set_result(body if isinstance(body, Mapping) else {})
        else:
            future.set_exception(ControlFailed(str(response.get("error") or "the agent refused the request")))

    def close(self, reason: str) -> None:
        """The CLI is gone: fail every waiting request, and any later one."""
        self._gone = reason
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ControlFailed(reason))

    def respond(self, request_id: str, body: Mapping[str, Any]) -> None:
        """Answer one of the CLI's requests."""
        response = {"subtype": "success", "request_id": request_id, "response": dict(body)}
        self._write({"type": "control_response", "response": response})

    def refuse(self, request_id: str, message: str) -> None:
        """Answer one of the CLI's requests with an error."""
        self._write(
            {"type": "control_response", "response": {"subtype": "error", "request_id": request_id, "error": message}}
        )


def choices_for(request: Mapping[str, Any]) -> list[PermissionChoice]:
    """What a `can_use_tool` request offers: allow or deny once, and allow always when the CLI suggests rules."""
    suggestions = request.get("permission_suggestions")
    always = [PermissionChoice.ALLOW_ALWAYS] if isinstance(suggestions, list) and suggestions else []
    return [PermissionChoice.ALLOW_ONCE, *always, PermissionChoice.DENY_ONCE]


def answer_body(request: Mapping[str, Any], answer: Answer | None) -> dict[str, Any]:
    """The `can_use_tool` response for the caller's answer; None means the turn was cancelled."""
    tool_input = request.get("input") if isinstance(request.get("input"), Mapping) else {}
    assert isinstance(tool_input, Mapping)
    if answer is None:
        return {"behavior": "deny", "message": CANCELLED, "interrupt": True}
    if isinstance(answer, QuestionsAnswer) and not answer.answers:
        return {"behavior": "deny", "message": DECLINED_QUESTION}
    if isinstance(answer, QuestionsAnswer):
        return {"behavior": "allow", "updatedInput": {**tool_input, "answers": question_answers(tool_input, answer)}}
    assert isinstance(answer, PermissionAnswer)
    if answer.choice is PermissionChoice.ALLOW_ONCE:
        return {"behavior": "allow", "updatedInput": dict(tool_input)}
    if answer.choice is PermissionChoice.ALLOW_ALWAYS:
        suggestions = request.get("permission_suggestions") or []
        return {"behavior": "allow", "updatedInput": dict(tool_input), "updatedPermissions": suggestions}
    return {"behavior": "deny", "message": DENIED}


def question_answers(tool_input: Mapping[str, Any], answer: QuestionsAnswer) -> dict[str, str]:
    """`AskUserQuestion`'s `answers`: question text → the chosen labels joined with ", " (choice ids are labels)."""
    questions = tool_input.get("questions")
    texts = (
        [str(q.get("question", "")) for q in questions if isinstance(q, Mapping)] if isinstance(questions, list) else []
    )
    answers: dict[str, str] = {}
    for text, reply in zip(texts, answer.answers, strict=False):
        answers[text] = reply.text if isinstance(reply, TextAnswer) else ", ".join(_ids(reply))
    return answers


def _ids(reply: ChoicesAnswer) -> list[str]:
    return list(reply.ids)

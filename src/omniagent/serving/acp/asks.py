"""An agent's requests as ACP requests to a client, and the client's replies as the runtime's answers.

A permission is `session/request_permission` (one option per choice the agent offers; an option's id is its kind).
A question is `elicitation/create` in form mode, one field per question, when the client advertised
forms; a secret question is never put in a form (forms must not ask for secrets). Pure functions: when to ask and
what to do with the reply is `serving/acp/follow.py`'s.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from omniagent.protocols.acp import v2
from omniagent.protocols.sidecar.commands import (
    DECLINED,
    ChoicesAnswer,
    PermissionAnswer,
    QuestionAnswer,
    QuestionsAnswer,
    TextAnswer,
)
from omniagent.protocols.sidecar.events import (
    SECRET_HEADER,
    PermissionChoice,
    PermissionRequest,
    Question,
    QuestionRequest,
)
from omniagent.serving.acp import builders as b
from omniagent.serving.acp.shapes import Shapes
from omniagent.serving.acp.view import tool_subject

# Each choice as the ACP option that offers it: (option id and kind, name).
_OPTIONS: dict[PermissionChoice, tuple[str, str]] = {
    PermissionChoice.ALLOW_ONCE: ("allow_once", "Allow once"),
    PermissionChoice.ALLOW_ALWAYS: ("allow_always", "Always allow"),
    PermissionChoice.DENY_ONCE: ("reject_once", "Reject"),
    PermissionChoice.DENY_ALWAYS: ("reject_always", "Always reject"),
}
_CHOICES = {option_id: choice for choice, (option_id, _name) in _OPTIONS.items()}


def meta(request_id: str, sequence: int) -> dict[str, Any]:
    """Our `_meta` on a request to the client: the agent's request id (named again when it is resolved) and the
    sequence of the event that opened it."""
    return {"omniagent": {"requestId": request_id, "sequence": sequence}}


def permission_params(
    shapes: Shapes, session_id: str, root: str, request: PermissionRequest, sequence: int
) -> dict[str, Any]:
    """The `session/request_permission` params asking for `request`."""
    subject = tool_subject(shapes, root, request.tool)
    title = request.detail or f"Allow {request.tool.title}?"
    offered = [_OPTIONS[choice] for choice in request.options]
    params = b.wire(b.permission_request(shapes, session_id, subject, title, offered))
    params["_meta"] = meta(request.id, sequence)
    return params


def permission_answer(request: PermissionRequest, result: Any) -> PermissionAnswer | None:
    """The client's reply as the answer: the option it selected; None for `cancelled` (its turn is being cancelled,
    which closes the request). Anything else (an outcome we do not know, `_`-prefixed or newer than us, an option that
    was not offered, a reply that is no outcome) is not approval, and ACP says to decline it then: it is answered
    "reject once", so the turn goes on without the call. None (left open for a cancel or another client) only when
    rejecting was not offered."""
    outcome = result.get("outcome") if isinstance(result, dict) else None
    kind = outcome.get("outcome") if isinstance(outcome, dict) else None
    if kind == "cancelled":
        return None
    choice = _CHOICES.get(str(outcome.get("optionId"))) if kind == "selected" and isinstance(outcome, dict) else None
    if choice is None or choice not in request.options:
        choice = PermissionChoice.DENY_ONCE  # never "always": a reply we cannot read must leave no lasting rule
    return PermissionAnswer(choice=choice) if choice in request.options else None


def askable(question_request: QuestionRequest) -> bool:
    """Whether the questions fit a form: none asks for a secret."""
    return all(q.header != SECRET_HEADER for q in question_request.questions)


def question_params(session_id: str, request: QuestionRequest, sequence: int) -> dict[str, Any]:
    """The `elicitation/create` params (form mode) putting every question of `request` to the user: a single choice
    as a titled enum, several as an array of them, free text as a string (its choices as a hint)."""
    properties: dict[str, Any] = {}
    for question in request.questions:
        properties[question.id] = _field(question)
    message = "\n\n".join(q.text for q in request.questions)
    form = v2.CreateElicitationRequestForm(
        session_id=session_id,
        message=message,
        requested_schema=v2.ElicitationSchema(type="object", properties=properties, required=list(properties)),
    )
    params = b.wire(form)
    params["_meta"] = meta(request.id, sequence)
    return params


def _field(question: Question) -> Any:
    title = question.header or question.text
    described = question.text if question.header else UNSET
    ids = [c.id for c in question.choices]
    if ids and question.multi_select and not question.allows_free_text:
        items = v2.MultiSelectItemsString(enum=ids)
        return v2.ElicitationPropertySchemaArray(title=title, description=described, items=items, min_items=1)
    if ids and not question.allows_free_text:
        one_of = [
            v2.EnumOption(const=c.id, title=c.label, description=c.description or UNSET) for c in question.choices
        ]
        return v2.ElicitationPropertySchemaString(title=title, description=described, one_of=one_of)
    if ids:
        hint = "Choose one of: " + ", ".join(c.label for c in question.choices) + ", or write your own."
        return v2.ElicitationPropertySchemaString(title=title, description=f"{question.text}\n\n{hint}")
    return v2.ElicitationPropertySchemaString(title=title, description=described)


def question_answer(request: QuestionRequest, result: Any) -> QuestionsAnswer:
    """The accepted form as the answer; `DECLINED` when the user declined or cancelled it, or a value does not fit
    (the agent goes on without an answer: a question left open would hold the turn)."""
    if not isinstance(result, dict) or result.get("action") != "accept":
        return DECLINED
    content = result.get("content")
    if not isinstance(content, dict):
        return DECLINED
    answers: list[QuestionAnswer] = []
    for question in request.questions:
        reply = _reply(question, content.get(question.id))
        if reply is None:
            return DECLINED
        answers.append(reply)
    return QuestionsAnswer(answers=answers)


def _reply(question: Question, value: Any) -> QuestionAnswer | None:
    ids = {c.id for c in question.choices}
    labels = {c.label: c.id for c in question.choices}
    if isinstance(value, list) and value and all(isinstance(v, str) and v in ids for v in value):
        return ChoicesAnswer(ids=list(value)) if question.multi_select or len(value) == 1 else None
    if not isinstance(value, str) or not value:
        return None
    if value in ids or value in labels:
        return ChoicesAnswer(ids=[value if value in ids else labels[value]])
    return TextAnswer(text=value) if question.allows_free_text else None

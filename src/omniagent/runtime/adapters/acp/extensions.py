"""Agent traffic outside ACP's core methods: vendor extensions the adapter understands, and the
diagnostic for every notification it does not. Pure translation: no I/O, no turn rules.

Grok (xAI) adds two methods:
- the notification `_x.ai/session/prompt_complete{sessionId, promptId, stopReason}`, the authoritative end of a
  prompted turn (Grok's `session/prompt` may never be answered). It echoes the `_meta.promptId` the prompt was
  sent with; an end carrying any other id belongs to an older prompt.
- the request `_x.ai/ask_user_question{sessionId, toolCallId, questions:[{question, header?, options:[{label,
  description?}], multiSelect}], mode}`, answered `{outcome:"accepted", answers:{<question text>: [labels]}}` or
  `{outcome:"cancelled"}`. It becomes a Question request: questions `q0`, `q1`, …, each choice's id is the option's
  own `id` when it has one, else its label; the answer goes back as the chosen options' labels (what Grok reads);
  free text only for a question without options.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from omniagent.protocols.sidecar.base import Diagnostic, DiagnosticLevel
from omniagent.protocols.sidecar.commands import Answer, ChoicesAnswer, QuestionsAnswer, TextAnswer
from omniagent.protocols.sidecar.events import (
    Choice,
    DiagnosticEvent,
    Question,
    QuestionRequest,
    StopReason,
)
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.acp.translate import stop_reason

PROMPT_COMPLETE = "_x.ai/session/prompt_complete"
# Grok clients see the question request under both spellings.
ASK_USER_QUESTION = frozenset({"_x.ai/ask_user_question", "x.ai/ask_user_question"})
# Grok's reply to a question nobody answered (the turn was cancelled or the session closes).
QUESTION_CANCELLED: Mapping[str, Any] = {"outcome": "cancelled"}


@dataclass(frozen=True, slots=True)
class PromptComplete:
    """A Grok turn end: the prompt id it echoes (None when it carries none) and how the turn stopped."""

    prompt_id: str | None
    stop: StopReason


def prompt_complete(params: Any) -> PromptComplete:
    """`_x.ai/session/prompt_complete` params as a turn end; a missing or odd `stopReason` reads as ACP's."""
    raw = params if isinstance(params, Mapping) else {}
    prompt_id = raw.get("promptId")
    reason = raw.get("stopReason")
    return PromptComplete(
        prompt_id=prompt_id if isinstance(prompt_id, str) else None,
        stop=stop_reason(reason if isinstance(reason, str) else None),
    )


def question_request(request_id: str, params: Any) -> QuestionRequest:
    """`_x.ai/ask_user_question` params as a Question request with id `request_id`."""
    raw = params if isinstance(params, Mapping) else {}
    listed = raw.get("questions")
    questions = [item for item in listed if isinstance(item, Mapping)] if isinstance(listed, list) else []
    return QuestionRequest(id=request_id, questions=[_question(index, item) for index, item in enumerate(questions)])


def _question(index: int, raw: Mapping[str, Any]) -> Question:
    choices: list[Choice] = []
    options = raw.get("options")
    for option in options if isinstance(options, list) else []:
        if not isinstance(option, Mapping):
            continue
        label, own_id = option.get("label"), option.get("id")
        if not isinstance(label, str):
            continue
        # An option's own id is the one a caller names it by (it may differ from what is shown); the label stands
        # in for an option without one. Either way it must be unique.
        choice_id = own_id if isinstance(own_id, str) and own_id else label
        if any(choice.id == choice_id for choice in choices):
            continue
        description = option.get("description")
        choices.append(
            Choice(id=choice_id, label=label, description=description if isinstance(description, str) else None)
        )
    header = raw.get("header")
    return Question(
        id=f"q{index}",
        text=str(raw.get("question") or ""),
        header=header if isinstance(header, str) else None,
        choices=choices,
        multi_select=raw.get("multiSelect") is True,
        allows_free_text=not choices,
    )


def question_reply(request: QuestionRequest, answer: Answer | None) -> Mapping[str, Any]:
    """Grok's reply: each question's text → the labels of the chosen options (a free-text answer as its one entry);
    no answer → cancelled."""
    if not isinstance(answer, QuestionsAnswer) or not answer.answers:
        return QUESTION_CANCELLED  # a declined question too
    answers: dict[str, list[str]] = {}
    for question, reply in zip(request.questions, answer.answers, strict=False):
        if isinstance(reply, ChoicesAnswer):
            labels = {choice.id: choice.label for choice in question.choices}
            answers[question.text] = [labels.get(choice_id, choice_id) for choice_id in reply.ids]
        elif isinstance(reply, TextAnswer):
            answers[question.text] = [reply.text]
    return {"outcome": "accepted", "answers": answers}


def unhandled_notification(method: str, params: Any) -> d.AdapterEvent:
    """A notification the adapter does not map → an Info diagnostic carrying it under its method."""
    diagnostic = Diagnostic(level=DiagnosticLevel.INFO, message=f"unhandled ACP notification `{method}`")
    return d.AdapterEvent(DiagnosticEvent(diagnostic=diagnostic), extensions={method: params})

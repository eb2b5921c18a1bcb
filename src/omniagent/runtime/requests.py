"""Checks the loop runs before anything reaches the wire: answers against open requests, options against the
agent's config options. Each returns None when the input is fine, else the detail sentence of the error."""

from __future__ import annotations

from omniagent.protocols.sidecar.agents import AgentDetails, BooleanKind, ConfigValue, SelectKind
from omniagent.protocols.sidecar.commands import Answer, ChoicesAnswer, PermissionAnswer, QuestionsAnswer, TextAnswer
from omniagent.protocols.sidecar.events import PermissionAsk, QuestionAsk, Request


def check_answer(request: Request, answer: Answer) -> str | None:
    """A permission choice must be offered; question answers must fit their questions (or decline them all)."""
    if isinstance(request, PermissionAsk):
        if not isinstance(answer, PermissionAnswer):
            return "answer type does not match the request"
        if answer.choice not in request.request.options:
            return f"choice {answer.choice.value} was not offered"
        return None
    assert isinstance(request, QuestionAsk)
    if not isinstance(answer, QuestionsAnswer):
        return "answer type does not match the request"
    questions = request.request.questions
    if not answer.answers:
        return None  # declined: the agent goes on without answers
    if len(answer.answers) != len(questions):
        return f"expected {len(questions)} answers, got {len(answer.answers)}"
    for question, reply in zip(questions, answer.answers, strict=True):
        if isinstance(reply, TextAnswer):
            if not question.allows_free_text:
                return f"question {question.id} does not allow free text"
            continue
        assert isinstance(reply, ChoicesAnswer)
        if not reply.ids:
            return "no choice given"
        if len(reply.ids) > 1 and not question.multi_select:
            return f"question {question.id} allows one choice"
        valid = {choice.id for choice in question.choices}
        for choice_id in reply.ids:
            if choice_id not in valid:
                return f"choice {choice_id} is not a choice of question {question.id}"
    return None


def check_option(details: AgentDetails, option: str, value: ConfigValue, *, live: bool) -> str | None:
    """The option must exist (and be live for `configure`) and the value must fit its kind."""
    for candidate in details.config_options:
        if candidate.id != option:
            continue
        if live and not candidate.live:
            return f"`{option}` is creation-only; set it through SessionOptions"
        if isinstance(candidate.kind, BooleanKind):
            return None if isinstance(value, bool) else "wrong value type"
        assert isinstance(candidate.kind, SelectKind)
        if not isinstance(value, str):
            return "wrong value type"
        if value not in {choice.value for choice in candidate.kind.choices}:
            return f"`{value}` is not a choice of `{option}`"
        return None
    return f"unknown option `{option}`"

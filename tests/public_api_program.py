"""A program written against the public API only: `omniagent` and `omniagent.events` (tests/test_public_api.py
checks that it imports nothing else, then runs it against a real agent).

It is what an app does with a session: open one, prompt, answer the agent's permission requests (allow once) and
its questions (a choice by label, or free text), set an option the agent offers, prompt again, and keep every event
it saw. It knows nothing of the agent behind the session.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import omniagent
from omniagent.events import (
    ChoicesAnswer,
    ConfigValue,
    Event,
    PermissionAnswer,
    PermissionAsk,
    PermissionChoice,
    Question,
    QuestionAnswer,
    QuestionAsk,
    QuestionsAnswer,
    RequestOpened,
    SelectKind,
    SessionUpdated,
    Started,
    TextAnswer,
    TurnEnded,
)


@dataclass(frozen=True, slots=True)
class Plan:
    """What the program does: the agent and directory, the two prompts, the answers it gives (by question text: a
    choice's label or free text) and the option it sets between the prompts."""

    agent: str
    directory: str
    first: str
    second: str
    replies: Mapping[str, str]
    option: str
    value: ConfigValue


async def run(plan: Plan) -> list[Event]:
    """Every event the session streamed, from the first prompt to the second turn's end."""
    seen: list[Event] = []
    async with omniagent.Runtime() as runtime:
        session = await runtime.open(plan.agent, plan.directory, omniagent.OpenOptions())
        delivery = await session.prompt(plan.first)
        assert isinstance(delivery.kind, Started), "an idle session starts a turn"
        seen += await _turn(session, plan.replies)
        seen += await _configure(session, plan.option, plan.value)
        await session.prompt(plan.second)
        seen += await _turn(session, plan.replies)
        await session.close()
    return seen


async def _turn(session: omniagent.Session, replies: Mapping[str, str]) -> list[Event]:
    """The events up to the turn's end, answering every request on the way."""
    seen: list[Event] = []
    async for event in session.events:
        seen.append(event)
        kind = event.kind
        if isinstance(kind, RequestOpened) and isinstance(kind.request, PermissionAsk):
            asked = kind.request.request
            await session.answer(asked.id, PermissionAnswer(choice=PermissionChoice.ALLOW_ONCE))
        elif isinstance(kind, RequestOpened) and isinstance(kind.request, QuestionAsk):
            questions = kind.request.request
            answers = [_reply(question, replies[question.text]) for question in questions.questions]
            await session.answer(questions.id, QuestionsAnswer(answers=answers))
        elif isinstance(kind, TurnEnded):
            return seen
    raise RuntimeError("the session ended before its turn did")


def _reply(question: Question, reply: str) -> QuestionAnswer:
    """The choice whose label is `reply`, else `reply` as free text (where the question allows it)."""
    chosen = [choice.id for choice in question.choices if choice.label == reply]
    if chosen:
        return ChoicesAnswer(ids=chosen)
    if not question.allows_free_text:
        raise ValueError(f"{reply!r} is not a choice of {question.text!r}")
    return TextAnswer(text=reply)


async def _configure(session: omniagent.Session, option: str, value: ConfigValue) -> list[Event]:
    """Set `option` to `value` if the agent offers that value, and wait until the session says it took."""
    offered = {o.id: o for o in session.info().details.config_options}
    kind = offered[option].kind
    if isinstance(kind, SelectKind) and value not in {choice.value for choice in kind.choices}:
        raise ValueError(f"{option} offers no {value!r}")
    await session.configure(option, value)
    seen: list[Event] = []
    async for event in session.events:
        seen.append(event)
        if isinstance(event.kind, SessionUpdated) and event.kind.info.configuration.options.get(option) == value:
            return seen
    raise RuntimeError("the session ended before the option took")

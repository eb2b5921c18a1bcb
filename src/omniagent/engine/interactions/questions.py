"""The model's questions to the user: the `ask_user` tool's question as an interaction, and its answer.

A question is broadcast as `interaction.requested` (a yuke `confirm`, `select` or `input`, with the session id) and
the run waits, in `running_tool` on the `ask_user` call, until a frontend answers: `interaction.respond` on the yuke
wire (its arm must match the question's, a `select` value must be one of the options; or `canceled`), or an
in-process face (the ACP agent through elicitation, the runtime adapter through a Question request) calling
`answer()`, which can also say that it cannot ask (`CannotAsk`: the tool fails with that sentence).

A `secret` input's value goes to `secrets.Secrets` and never further: the tool learns only the name of the
environment variable that carries it to commands.

What this is not: the registry and the wire dispatch (`registry.py`), or the tool's arguments and the sentence
the model reads (`tools/ask.py`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from omniagent.engine.errors import EngineError
from omniagent.engine.interactions.registry import Interactions
from omniagent.engine.interactions.secrets import Secrets
from omniagent.engine.tools.context import Answer, Answered, CannotAsk, Dismissed, Question, SecretKept
from omniagent.protocols.yuke.interactions import (
    InteractionCanceled,
    InteractionConfirm,
    InteractionInput,
    InteractionRequest,
    InteractionResponse,
    InteractionSelect,
)

# What the user's answer is, before a secret is put away: the value, dismissed, or "cannot ask".
Reply = Answered | Dismissed | CannotAsk


@dataclass(slots=True)
class PendingQuestion:
    """One open question: the tool call that asks it, what it asks, and the future its reply resolves."""

    interaction_id: int
    session_id: str
    message_id: int
    part_id: int
    question: Question
    reply: asyncio.Future[Reply] = field(default_factory=lambda: asyncio.get_running_loop().create_future())

    def answered(self) -> bool:
        return self.reply.done()

    def respond(self, response: InteractionResponse) -> None:
        """A yuke answer: the arm of the question (a select's value among its options), or `canceled`."""
        self.reply.set_result(_reply(self.question, response))


class Questions:
    """The open questions of every session of one engine, and the secret answers they took."""

    def __init__(self, interactions: Interactions, secrets: Secrets) -> None:
        self._interactions = interactions
        self.secrets = secrets

    async def ask(self, session_id: str, message_id: int, part_id: int, question: Question) -> Answer:
        """Broadcast the question from the tool call (`message_id`, `part_id`) and wait for the user's answer.
        Cancelling the caller answers it dismissed."""
        pending = PendingQuestion(self._interactions.new_id(), session_id, message_id, part_id, question)
        reply = await self._interactions.wait(pending, request_of(question), pending.reply, Dismissed())
        if question.secret and isinstance(reply, Answered) and isinstance(reply.value, str):
            return SecretKept(self.secrets.keep(session_id, pending.interaction_id, reply.value))
        return reply

    def pending(self, interaction_id: int) -> PendingQuestion | None:
        """The open question with this id, if any."""
        found = self._interactions.get(interaction_id)
        return found if isinstance(found, PendingQuestion) else None

    def answer(self, interaction_id: int, reply: Reply) -> None:
        """Answer an open question in process (the value must fit it, as on the wire).

        Raises:
            EngineError: unknown_interaction (never asked, already answered, or not a question); bad_request (a
                value of the wrong kind, or not one of a select's options).
        """
        pending = self._interactions.check_open(interaction_id)
        if not isinstance(pending, PendingQuestion):
            raise EngineError.unknown_interaction()
        if isinstance(reply, Answered):
            _check_value(pending.question, reply.value)
        pending.reply.set_result(reply)


def request_of(question: Question) -> InteractionRequest:
    """The yuke request that puts `question` to the user."""
    if question.kind == "confirm":
        return InteractionConfirm(title=question.title, message=question.detail)
    if question.kind == "select":
        return InteractionSelect(title=question.title, options=list(question.options))
    return InteractionInput(title=question.title, placeholder=question.placeholder, secret=question.secret or None)


def _reply(question: Question, response: InteractionResponse) -> Reply:
    if isinstance(response, InteractionCanceled):
        return Dismissed()
    if response.type != question.kind:
        raise EngineError.bad_request(f"the response does not match the request: a {question.kind} was asked")
    _check_value(question, response.value)
    return Answered(response.value)


def _check_value(question: Question, value: bool | str) -> None:
    if isinstance(value, bool) != (question.kind == "confirm"):
        raise EngineError.bad_request(f"the answer does not fit the question: a {question.kind} was asked")
    if question.kind == "select" and value not in question.options:
        raise EngineError.bad_request("the answer is not one of the options")

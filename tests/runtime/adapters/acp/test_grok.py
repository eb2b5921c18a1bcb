"""Grok's ACP extensions through `Runtime` + `Session` against the quirky fixture agent in its `--grok` role (a
real subprocess speaking ACP v1 over stdio): `_x.ai/session/prompt_complete` ends turns, `_x.ai/ask_user_question`
is a Question request, first-class models keep their descriptions (docs/agents.md "Grok")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.sidecar.agents import Capability, ConfigChoice, SelectKind
from omniagent.protocols.sidecar.commands import ChoicesAnswer, QuestionsAnswer, TextAnswer
from omniagent.protocols.sidecar.events import (
    Cancelled,
    Choice,
    Completed,
    DiagnosticEvent,
    Question,
    QuestionAsk,
    QuestionRequest,
    RequestClosed,
    RequestOpened,
    SessionUpdated,
    TurnEnded,
)
from omniagent.runtime.errors import InvalidRequest
from tests.event_stream import tags
from tests.runtime.adapters.acp.harness import agent_session, collect, is_kind, of, one_turn, quirky_agent, texts


def prompts(log: Path) -> list[dict[str, Any]]:
    """The params of every `session/prompt` the agent read, in order."""
    messages = [json.loads(line) for line in log.read_text().splitlines()]
    return [message["params"] for message in messages if message.get("method") == "session/prompt"]


async def test_prompt_complete_for_the_current_prompt_ends_the_turn_and_a_stale_one_is_ignored(
    tmp_path: Path,
) -> None:
    """The prompt goes out with `_meta.promptId` = the prompt id; Grok never answers `session/prompt`, and its
    `prompt_complete` echoing that id ends the turn with its stop reason. A `prompt_complete` for another id (here
    "cancelled") changes nothing: the text after it stays in the turn. The next prompt works the same way."""
    log = tmp_path / "wire.jsonl"
    async with agent_session(quirky_agent("--grok", "--log", str(log)), tmp_path) as session:
        await session.prompt("first")
        first = await one_turn(session)
        await session.prompt("second")
        second = await one_turn(session)
    assert texts(first) == "workdone" and texts(second) == "workdone"
    assert first[-1].kind == TurnEnded(stop=Completed()) and second[-1].kind == TurnEnded(stop=Completed())
    assert not of(first + second, DiagnosticEvent)
    assert [params["_meta"] for params in prompts(log)] == [
        {"promptId": "p1", "requestId": "p1"},
        {"promptId": "p2", "requestId": "p2"},
    ]


async def test_a_turn_ended_by_prompt_complete_and_by_the_answer_ends_once(tmp_path: Path) -> None:
    """When Grok also answers `session/prompt` after its `prompt_complete`, the turn still ends once: no second
    stop, which the idle loop would report as a late turn end. (The configure round trip after the turn is read
    behind the prompt's answer, so its SessionUpdated comes after anything that answer caused.)"""
    async with agent_session(quirky_agent("--grok", "--options"), tmp_path) as session:
        await session.prompt("both")
        turn = await one_turn(session)
        await session.configure("fast", True)
        after = await collect(session, is_kind(SessionUpdated))
    assert tags(turn).count("TurnEnded") == 1
    assert not of(turn + after, DiagnosticEvent)


QUESTIONS = [
    Question(
        id="q0",
        text="Which colour?",
        header="Colour",
        choices=[
            Choice(id="Red", label="Red", description="warm"),
            Choice(id="Blue", label="Blue", description="cool"),
        ],
        multi_select=False,
        allows_free_text=False,
    ),
    Question(
        id="q1",
        text="Which sizes?",
        choices=[Choice(id=size, label=size) for size in ("S", "M", "L")],
        multi_select=True,
        allows_free_text=False,
    ),
]


async def test_ask_user_question_is_a_question_request_answered_with_the_chosen_labels(tmp_path: Path) -> None:
    """`_x.ai/ask_user_question` → RequestOpened(Question) with id `r` + the JSON-RPC id, questions `q0`, `q1`,
    choice ids = labels, descriptions and multiSelect kept; Questions is advertised on first sight (SessionUpdated
    first). The answer goes back as `{outcome:"accepted", answers:{question text: [labels]}}`."""
    async with agent_session(quirky_agent("--grok"), tmp_path) as session:
        assert Capability.QUESTIONS not in session.info().details.capabilities.features
        await session.prompt("ask")
        opened = await collect(session, is_kind(RequestOpened))
        assert tags(opened)[-2:] == ["SessionUpdated", "RequestOpened"]
        assert Capability.QUESTIONS in of(opened, SessionUpdated)[-1].info.details.capabilities.features
        request = of(opened, RequestOpened)[-1].request
        assert request == QuestionAsk(request=QuestionRequest(id="r0", questions=QUESTIONS))
        with_text = QuestionsAnswer(answers=[TextAnswer(text="green"), ChoicesAnswer(ids=["S"])])
        with pytest.raises(InvalidRequest) as refused:  # checked before the wire: these questions take no text
            await session.answer("r0", with_text)
        assert refused.value.detail == "question q0 does not allow free text"
        await session.answer("r0", QuestionsAnswer(answers=[ChoicesAnswer(ids=["Red"]), ChoicesAnswer(ids=["S", "L"])]))
        turn = await one_turn(session)
    assert of(turn, RequestClosed) == [RequestClosed(request_id="r0")]
    assert json.loads(texts(turn)) == {
        "answers": {"Which colour?": ["Red"], "Which sizes?": ["S", "L"]},
        "outcome": "accepted",
    }
    assert turn[-1].kind == TurnEnded(stop=Completed())


async def test_an_option_with_its_own_id_is_chosen_by_that_id_and_answered_with_its_label(tmp_path: Path) -> None:
    """A Grok option that has an `id` keeps it as the choice id (its label is what is shown), so an answer naming
    `g` is taken; Grok gets the chosen option's label back, as for options without ids."""
    async with agent_session(quirky_agent("--grok"), tmp_path) as session:
        await session.prompt("ask-ids")
        opened = await collect(session, is_kind(RequestOpened))
        request = of(opened, RequestOpened)[-1].request
        assert isinstance(request, QuestionAsk)
        assert request.request.questions[0].choices == [
            Choice(id="g", label="Green"),
            Choice(id="b", label="Blue"),
        ]
        await session.answer("r0", QuestionsAnswer(answers=[ChoicesAnswer(ids=["g"])]))
        turn = await one_turn(session)
    assert json.loads(texts(turn)) == {"answers": {"Which shade?": ["Green"]}, "outcome": "accepted"}
    assert turn[-1].kind == TurnEnded(stop=Completed())


async def test_a_cancelled_question_is_answered_cancelled(tmp_path: Path) -> None:
    """Cancel with a Grok question open: RequestClosed, the agent gets `{"outcome":"cancelled"}`, the turn ends
    Cancelled."""
    async with agent_session(quirky_agent("--grok"), tmp_path) as session:
        await session.prompt("ask")
        await collect(session, is_kind(RequestOpened))
        await session.cancel()
        turn = await one_turn(session)
    assert of(turn, RequestClosed) == [RequestClosed(request_id="r0")]
    assert json.loads(texts(turn)) == {"outcome": "cancelled"}
    assert turn[-1].kind == TurnEnded(stop=Cancelled())


async def test_first_class_models_keep_each_models_description(tmp_path: Path) -> None:
    """Grok's first-class `models` describe each model; the `model` option's choices carry the descriptions."""
    async with agent_session(quirky_agent("--grok", "--models"), tmp_path) as session:
        model = next(option for option in session.info().details.config_options if option.id == "model")
    assert isinstance(model.kind, SelectKind)
    assert model.kind.choices[:2] == [
        ConfigChoice(value="default", label="Default (recommended)", description="Default (recommended), described"),
        ConfigChoice(value="opus", label="Opus", description="Opus, described"),
    ]

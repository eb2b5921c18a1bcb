"""The model's questions (`ask_user`) through the `Runtime` (issue 12 part 4): each becomes
`RequestOpened(Question)`, answered with `answer(...)`; a secret answer is free text the model never sees. Every
event is checked against the anyagent schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omniagent.protocols.sidecar.commands import ChoicesAnswer, QuestionsAnswer, TextAnswer
from omniagent.protocols.sidecar.events import Choice, QuestionAsk, RequestOpened, ToolStatus, ToolUpdated
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.runtime.adapters.engine.harness import (
    bodies,
    collect,
    is_kind,
    of,
    one_turn,
    open_engine,
    runtime,
    use_engine,
    workspace,
)

SECRET = "pa55-word-for-the-runtime"


def _ask(**arguments: object) -> Reply:
    return Reply(tool_calls=(FakeToolCall("ask_user", arguments),))


async def test_a_confirm_a_select_and_a_secret_input_round_trip_as_question_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = workspace(tmp_path)
    scenario = Scenario(
        [
            _ask(kind="confirm", question="Run the migration?", detail="It rewrites the users table."),
            _ask(kind="select", question="Which branch?", options=["main", "dev"]),
            _ask(kind="input", question="Deploy token?", secret=True),
            Reply(text="All set."),
        ]
    )
    async with FakeLLMServer(scenario) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws)
            await session.prompt("deploy")
            shown = []
            for answer in (
                QuestionsAnswer(answers=[ChoicesAnswer(ids=["yes"])]),
                QuestionsAnswer(answers=[ChoicesAnswer(ids=["dev"])]),
                QuestionsAnswer(answers=[TextAnswer(text=SECRET)]),
            ):
                opened = (await collect(session, is_kind(RequestOpened)))[-1].kind
                assert isinstance(opened, RequestOpened) and isinstance(opened.request, QuestionAsk)
                shown.append(opened.request.request.questions[0])
                await session.answer(opened.request.request.id, answer)
            rest = await one_turn(session)
        sent = [json.dumps(body) for body in await bodies(llm, 4)]
    assert shown[0].text == "Run the migration?\nIt rewrites the users table."
    assert shown[0].choices == [Choice(id="yes", label="Yes"), Choice(id="no", label="No")]
    assert [c.id for c in shown[1].choices] == ["main", "dev"] and not shown[1].allows_free_text
    assert shown[2].allows_free_text and shown[2].header == "Secret" and shown[2].choices == []
    assert "The user answered yes." in sent[1] and "The user chose: dev" in sent[2]
    assert "OMNIAGENT_SECRET_" in sent[3] and all(SECRET not in body for body in sent)
    done = [u.tool for u in of(rest, ToolUpdated) if u.tool.status is ToolStatus.COMPLETED]
    assert done and all(SECRET not in (tool.output or "") for tool in done)

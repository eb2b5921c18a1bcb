"""The model's questions (`ask_user`) through `omniagent acp` (issue 12 part 4; docs/acp.md): a client that advertises
elicitation forms gets `elicitation/create` (one field per question, named by the question's id, its choices as a
titled enum) and its answer is the tool's result; a declined form, a client that takes no forms, or a secret question
(forms must not ask for secrets) declines the question: the tool fails with a sentence the model reads, and the turn
goes on. Every message the agent wrote is validated against the ACP schema of the version."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.acp import v2
from omniagent.runtime.adapters.acp.client import ClientHandlers, SessionEvent, open_acp_client
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.faces.acp.agent_harness import agent_argv, agent_env, check_transcript, prepare

WAIT = 30.0  # seconds: bound on every test body


class Asked:
    """A client that answers each elicitation with the next scripted result (a raw response object)."""

    def __init__(self, results: list[dict[str, Any]]) -> None:
        self.requests: list[dict[str, Any]] = []
        self.results = list(results)
        self.events: list[SessionEvent] = []

    async def on_elicitation(self, request: Any) -> Any:
        self.requests.append(request.dump())
        return self.results.pop(0)

    async def on_update(self, event: SessionEvent) -> None:
        self.events.append(event)

    def handlers(self, *, elicits: bool) -> ClientHandlers:
        return ClientHandlers(on_update=self.on_update, on_elicitation=self.on_elicitation if elicits else None)

    def tool_results(self) -> list[dict[str, Any]]:
        return [
            e.raw
            for e in self.events
            if e.raw.get("sessionUpdate") == "tool_call_update" and e.raw.get("status") in ("completed", "failed")
        ]


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLMServer]:
    async with FakeLLMServer(Scenario()) as server:
        yield server


def _ask(**arguments: Any) -> Reply:
    return Reply(tool_calls=(FakeToolCall("ask_user", arguments),))


def _results_text(results: list[dict[str, Any]]) -> list[str]:
    return [c["content"]["text"] for r in results for c in r.get("content") or [] if c.get("type") == "content"]


async def test_a_client_with_elicitation_forms_answers_a_confirm_and_a_select(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    llm.enqueue(
        _ask(kind="confirm", question="Push to origin?", detail="Branch main, 3 commits."),
        _ask(kind="select", question="Which license?", options=["MIT", "Apache-2.0"]),
        Reply(text="Done."),
    )
    data, ws, log = prepare(tmp_path, llm)
    client = Asked([{"action": "accept", "content": {"q0": "yes"}}, {"action": "accept", "content": {"q0": "MIT"}}])
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(elicits=True), env=agent_env()) as acp,
    ):
        session = await acp.new_session(str(ws))
        end = await acp.prompt(session.session_id, [v2.ContentBlockText(text="release it")])
    assert end.stop_reason == "end_turn"
    confirm, select = client.requests
    assert confirm["mode"] == "form" and confirm["sessionId"] == session.session_id
    assert confirm["message"] == "Push to origin?\nBranch main, 3 commits."
    yes_no = [{"const": "yes", "title": "Yes"}, {"const": "no", "title": "No"}]
    assert confirm["requestedSchema"]["properties"]["q0"]["oneOf"] == yes_no
    licenses = [{"const": "MIT", "title": "MIT"}, {"const": "Apache-2.0", "title": "Apache-2.0"}]
    assert select["requestedSchema"]["properties"]["q0"]["oneOf"] == licenses
    assert select["requestedSchema"]["required"] == ["q0"]
    assert _results_text(client.tool_results()) == ["The user answered yes.", "The user chose: MIT"]
    states = [e.raw["state"] for e in client.events if e.raw.get("sessionUpdate") == "state_update"]
    assert states[:3] == ["running", "requires_action", "running"]
    sent = json.dumps((await llm.wait_for_requests_async(3))[2].body)
    assert "The user chose: MIT" in sent
    check_transcript(log)


async def test_a_declined_form_and_a_secret_question_fail_the_tool_with_a_sentence(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    llm.enqueue(
        _ask(kind="input", question="Release name?"),
        _ask(kind="input", question="npm token?", secret=True),
        Reply(text="Stopped."),
    )
    data, ws, log = prepare(tmp_path, llm)
    client = Asked([{"action": "decline"}])
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(elicits=True), env=agent_env()) as acp,
    ):
        session = await acp.new_session(str(ws))
        assert (await acp.prompt(session.session_id, [v2.ContentBlockText(text="publish")])).stop_reason == "end_turn"
    assert len(client.requests) == 1  # the secret was never put in a form
    failed = _results_text(client.tool_results())
    assert failed == ["the user dismissed the question without answering"] * 2
    check_transcript(log)


async def test_a_client_without_elicitation_gets_a_clear_tool_error(tmp_path: Path, llm: FakeLLMServer) -> None:
    llm.enqueue(_ask(kind="confirm", question="Proceed?"), Reply(text="I will decide myself."))
    data, ws, log = prepare(tmp_path, llm)
    client = Asked([])
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(elicits=False), env=agent_env()) as acp,
    ):
        session = await acp.new_session(str(ws))
        assert (await acp.prompt(session.session_id, [v2.ContentBlockText(text="go")])).stop_reason == "end_turn"
    result = client.tool_results()[-1]
    assert result["status"] == "failed"
    assert _results_text([result]) == ["the user dismissed the question without answering"]
    sent = json.dumps((await llm.wait_for_requests_async(2))[1].body)
    assert "the user dismissed the question without answering" in sent
    check_transcript(log)

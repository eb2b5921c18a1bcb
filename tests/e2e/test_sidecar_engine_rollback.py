"""Our engine's questions and rollback through a real `omniagent serve` subprocess (issue 12 parts 3-4): the
model's `ask_user` is a `RequestOpened{Question}` answered with `answer`, and `rollback` with
`ConversationAndFiles` puts back the files the last turn wrote. Every line is schema-checked by the client."""

from __future__ import annotations

from pathlib import Path

from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.e2e.sidecar_client import Sidecar, texts
from tests.runtime.adapters.engine.harness import child_env, workspace


async def test_a_question_is_answered_over_the_wire_and_rollback_restores_the_files(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    ask = FakeToolCall("ask_user", {"kind": "select", "question": "Which file name?", "options": ["a.txt", "b.txt"]})
    write = FakeToolCall("write", {"path": "b.txt", "content": "bee\n"})
    scenario = Scenario(
        [Reply(tool_calls=(ask,)), Reply(tool_calls=(write,)), Reply(text="Wrote it."), Reply(text="ok")]
    )
    async with FakeLLMServer(scenario) as llm, Sidecar.running(env=child_env(tmp_path, llm)) as sidecar:
        info = await sidecar.ok("open", agent="omniagent", dir=str(ws), configure={"mode": "auto"})
        session = info["id"]
        features = info["details"]["capabilities"]["features"]
        assert {"Questions", "Rollback", "RollbackFiles"} <= set(features)
        await sidecar.ok("prompt", session=session, text="write one of them")
        opened = (await sidecar.wait_event(session, "RequestOpened"))["kind"]["RequestOpened"]["Question"]
        assert opened["questions"][0]["text"] == "Which file name?"
        assert [c["id"] for c in opened["questions"][0]["choices"]] == ["a.txt", "b.txt"]
        answer = {"Question": [{"Choices": ["b.txt"]}]}
        assert await sidecar.ok("answer", session=session, request=opened["id"], answer=answer) is None
        await sidecar.wait_event(session, "TurnEnded")
        assert (ws / "b.txt").read_text() == "bee\n"

        mark = len(sidecar.lines)
        assert await sidecar.ok("rollback", session=session, turns=1, scope="ConversationAndFiles") is None
        await sidecar.ok("prompt", session=session, text="start over")
        await sidecar.wait_event(session, "TurnEnded", start=mark)
        assert not (ws / "b.txt").exists()
        assert texts(sidecar.events(session))[-1:] == ["ok"]
    last = llm.requests[-1].body
    assert isinstance(last, dict) and "Which file name?" not in str(last["messages"])

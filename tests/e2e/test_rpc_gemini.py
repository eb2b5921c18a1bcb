"""The Gemini provider end to end (issue 13, part 5): a real `omniagent rpc` with the built-in `gemini` provider,
keyed by `GOOGLE_API_KEY` and pointed at the fake LLM's Gemini wire by `GOOGLE_GEMINI_BASE_URL`: a turn that is
retried after a 503, calls a tool, and answers, with usage and cost."""

from __future__ import annotations

from pathlib import Path

from omniagent.testing import ErrorReply, FakeLLMServer, FakeToolCall, FakeUsage, Reply, Scenario, fingerprint
from tests.engine.rpc_harness import RpcProcess

KEY = "AIza-google-key-for-tests-0123456789"
WAIT = 15.0


async def test_a_turn_retries_calls_a_tool_and_answers_over_the_gemini_wire(tmp_path: Path) -> None:
    scenario = Scenario(
        [
            ErrorReply(503, message="The model is overloaded. Please try again later."),
            Reply(
                reasoning="Look at the file first.",
                tool_calls=(FakeToolCall("read", {"path": "notes.txt"}),),
                signature="sig-call-1",
                usage=FakeUsage(input=1500, output=20, reasoning=8),
            ),
            Reply(text="The notes say hello.", usage=FakeUsage(input=1600, output=6, cache_read=1024)),
        ]
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello\n")
    async with FakeLLMServer(scenario) as llm:
        env = {"GOOGLE_API_KEY": KEY, "GOOGLE_GEMINI_BASE_URL": llm.url, "OMNIAGENT_RETRY_SCALE": "0.01"}
        rpc = await RpcProcess.start(tmp_path / "data", env)
        try:
            catalog = await rpc.call("catalog.list")
            gemini = next(p for p in catalog["providers"] if p["id"] == "gemini")
            assert gemini["state"] == "ready"
            params = {"workspace_path": str(ws), "model": "gemini/gemini-2.5-flash", "reasoning": "low"}
            sid = (await rpc.call("session.create", params))["session"]["id"]
            content = [{"type": "text", "text": "What do the notes say?"}]
            await rpc.call("session.send_input", {"session_id": sid, "input": {"type": "content", "content": content}})
            done = await rpc.broadcast("run.done", within=WAIT)
            assert rpc.lines[done]["params"]["outcome"] == {"type": "turn", "finish": "stop", "rounds": 2}
            retrying = [
                line["params"]["activity"]["state"]
                for line in rpc.lines
                if line.get("method") == "session.activity_changed"
                and line["params"]["activity"]["state"]["type"] == "retrying"
            ]
            assert [(r["attempt"], r["code"]) for r in retrying] == [(1, "provider")]
            assistants = [
                line["params"]["message"]
                for line in rpc.lines
                if line.get("method") == "message.committed" and line["params"]["message"]["type"] == "assistant"
            ]
        finally:
            assert await rpc.close() == 0
            stderr = await rpc.stderr()
    first, answer = assistants
    assert [p["type"] for p in first["content"]] == ["reasoning", "tool", "reasoning"]
    assert first["content"][1]["state"]["output"].endswith("hello")
    assert first["provenance"] == {"protocol": "gemini", "model": "gemini-2.5-flash"}
    assert first["tokens"] == {"input": 1500, "output": 28, "reasoning": 8, "cache_read": 0, "cache_write": 0}
    assert answer["tokens"]["cache_read"] == 1024
    # 1600 input of which 1024 cached: 576 fresh at 0.30, 1024 cached at 0.03, 6 out at 2.50 per million.
    assert answer["cost"] == round((576 * 0.30 + 1024 * 0.03 + 6 * 2.50) / 1e6, 9)
    assert "".join(p.get("text", "") for p in answer["content"]) == "The notes say hello."
    requests = llm.requests
    assert [r.path for r in requests] == ["/v1beta/models/gemini-2.5-flash:streamGenerateContent"] * 3
    assert {r.credential for r in requests} == {fingerprint(KEY)}
    body = requests[2].body
    assert isinstance(body, dict)
    model_turn, results = body["contents"][1], body["contents"][2]
    assert model_turn["parts"] == [
        {"functionCall": {"name": "read", "args": {"path": "notes.txt"}}, "thoughtSignature": "sig-call-1"}
    ]
    response = results["parts"][0]["functionResponse"]
    assert response["name"] == "read" and response["response"]["output"].endswith("hello")
    assert body["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 1024, "includeThoughts": True}
    wire = "\n".join(str(line) for line in rpc.lines) + stderr
    assert KEY not in wire

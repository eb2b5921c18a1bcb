"""`omniagent acp` (a real subprocess, against the fake LLM) driven by our own ACP client, version 2: negotiation,
the v2 prompt lifecycle, tool calls with diffs, permissions, cancel, list, resume with replay, config options.
Every message the agent wrote is validated against the v2 JSON schema (issue "One system" parts 1-2)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.acp import v2
from omniagent.runtime.adapters.acp.client import ClientHandlers, PermissionRequest, SessionEvent, open_acp_client
from omniagent.testing import ErrorReply, FakeLLMServer, FakeToolCall, FakeUsage, Reply, Scenario
from omniagent.wire.messages import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError
from tests.faces.acp.agent_harness import (
    MODEL,
    agent_argv,
    agent_env,
    agent_messages,
    check_transcript,
    prepare,
    read_log,
)
from tests.pages import serving

WAIT = 30.0  # seconds: bound on every test body


class Client:
    """Records updates; answers permission requests from a script (None = wait until cancelled)."""

    def __init__(self, answers: list[str | None] | None = None) -> None:
        self.events: list[SessionEvent] = []
        self.asked: list[PermissionRequest] = []
        self.answers = list(answers or [])
        self.asking = asyncio.Event()
        self.changed = asyncio.Event()

    async def on_update(self, event: SessionEvent) -> None:
        self.events.append(event)
        self.changed.set()

    async def wait_kind(self, kind: str) -> None:
        while kind not in self.kinds():
            self.changed.clear()
            await self.changed.wait()

    async def on_permission(self, request: PermissionRequest) -> str | None:
        self.asked.append(request)
        self.asking.set()
        answer = self.answers.pop(0) if self.answers else None
        if answer is None:
            await asyncio.Event().wait()  # until the client's cancel() cancels this handler
        return answer

    def handlers(self) -> ClientHandlers:
        return ClientHandlers(on_update=self.on_update, on_permission=self.on_permission)

    def kinds(self) -> list[str]:
        return [str(e.raw.get("sessionUpdate")) for e in self.events]


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLMServer]:
    async with FakeLLMServer(Scenario()) as server:
        yield server


def _write(path: str = "notes.txt", content: str = "one\ntwo\n", call_id: str = "call_w") -> Reply:
    return Reply(tool_calls=(FakeToolCall("write", {"path": path, "content": content}, call_id),))


async def test_v2_is_negotiated_and_a_turn_streams_the_v2_lifecycle(tmp_path: Path, llm: FakeLLMServer) -> None:
    """Asked for 2 the agent answers 2 with real capabilities; the prompt is answered `{messageId}` before
    any update, then user_message (that messageId), running, thought and message chunks with message ids,
    usage_update, session_info_update (title), and idle `end_turn`."""
    llm.enqueue(Reply(text="Hello there, friend.", reasoning="Think first.", usage=FakeUsage(input=120, output=30)))
    data, ws, log = prepare(tmp_path, llm)
    client = Client()
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=agent_env()) as acp,
    ):
        assert acp.version == 2 and isinstance(acp.agent, v2.InitializeResponse)
        attach = {"roles": ["controller", "observer"], "historyPolicies": ["full", "pending_only", "none"], "after": {}}
        session_caps = {
            "prompt": {"embeddedContext": {}},
            "mcp": {"stdio": {}, "http": {}},
            "delete": {},
            "fork": {},
            "attach": attach,
        }
        assert acp.init_result["capabilities"]["session"] == session_caps
        assert acp.init_result["info"]["name"] == "omniagent"
        session = await acp.new_session(str(ws))
        ids = [o.config_id for o in session.config_options]
        assert ids == ["model", "reasoning", "mode", "sandbox", "network", "fetch"]
        assert session.config_options[0].current_value == MODEL and session.config_options[2].current_value == "ask"
        end = await acp.prompt(session.session_id, [v2.ContentBlockText(text="Say hello\nplease")])
    assert end.stop_reason == "end_turn"
    kinds = client.kinds()
    assert kinds[0] == "user_message" and kinds[-1] == "state_update"
    assert kinds.index("state_update") < kinds.index("agent_thought_chunk") < kinds.index("agent_message_chunk")
    assert {"agent_thought_chunk", "agent_message_chunk", "usage_update", "session_info_update"} <= set(kinds)
    raw = [e.raw for e in client.events]
    assert raw[0]["content"] == [{"type": "text", "text": "Say hello\nplease"}]
    text = "".join(r["content"]["text"] for r in raw if r["sessionUpdate"] == "agent_message_chunk")
    assert text == "Hello there, friend."
    assert {r["messageId"] for r in raw if r["sessionUpdate"] == "agent_message_chunk"} == {"m2"}
    assert next(r for r in raw if r["sessionUpdate"] == "session_info_update")["title"] == "Say hello"
    assert next(r for r in raw if r["sessionUpdate"] == "usage_update") == {
        "sessionUpdate": "usage_update",
        "used": 150,
        "size": 100000,
        "cost": {"amount": 0.00081, "currency": "USD"},
    }
    assert raw[-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    # On the wire the prompt's answer, the user message's id (the draft's receipt), comes before the first update of
    # the turn, which echoes that message under the same id.
    wire = agent_messages(log)
    prompt_answer = next(
        i for i, m in enumerate(wire) if (m.get("result") or {}).get("messageId") == raw[0]["messageId"]
    )
    first_update = next(i for i, m in enumerate(wire) if m.get("method") == "session/update")
    assert prompt_answer < first_update
    assert check_transcript(log) > 8


async def test_a_permission_turn_asks_and_allow_always_is_remembered_for_the_session(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """Part 2: in ask mode a write is announced (tool_call_update pending), then `session/request_permission`
    with the tool call as subject and allow once / allow always / reject; requires_action while asked, running
    after; the completed call carries its output and a structured diff. "Always" skips the next ask."""
    llm.enqueue(_write(), Reply(text="Written."), _write("more.txt", "x\n", "call_2"), Reply(text="Again."))
    data, ws, log = prepare(tmp_path, llm)
    client = Client(["allow_always"])
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=agent_env()) as acp,
    ):
        session = await acp.new_session(str(ws))
        assert (await acp.prompt(session.session_id, [v2.ContentBlockText(text="write")])).stop_reason == "end_turn"
        assert (await acp.prompt(session.session_id, [v2.ContentBlockText(text="more")])).stop_reason == "end_turn"
    assert (ws / "notes.txt").read_text() == "one\ntwo\n" and (ws / "more.txt").read_text() == "x\n"
    assert len(client.asked) == 1
    asked = client.asked[0]
    assert isinstance(asked, v2.RequestPermissionRequest)
    assert [o.kind for o in asked.options] == ["allow_once", "allow_always", "reject_once"]
    assert isinstance(asked.subject, v2.RequestPermissionSubjectToolCall)
    assert asked.subject.tool_call.tool_call_id == "t2.0"
    tool = [e.raw for e in client.events if e.raw.get("toolCallId") == "t2.0"]
    assert [u.get("status") for u in tool] == ["pending", "in_progress", "completed"]
    assert tool[0]["title"] == "Write notes.txt" and tool[0]["kind"] == "edit"
    assert tool[0]["locations"] == [{"path": str(ws / "notes.txt")}]
    diff = next(c for c in tool[2]["content"] if c["type"] == "diff")
    assert diff["changes"] == [{"operation": "add", "path": str(ws / "notes.txt")}]
    assert "+one\n+two\n" in diff["patch"]["text"]
    states = [e.raw["state"] for e in client.events if e.raw.get("sessionUpdate") == "state_update"]
    assert states[:3] == ["running", "requires_action", "running"]
    check_transcript(log)


async def test_cancel_during_a_permission_ask_ends_the_turn_cancelled_and_nothing_runs(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """Issue "One system" part 2: cancel answers the pending permission `cancelled`; the engine stops the run, the
    call ends `cancelled`, the turn ends with idle `cancelled`, and the file is never written."""
    llm.enqueue(_write())
    data, ws, log = prepare(tmp_path, llm)
    client = Client([None])
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=agent_env()) as acp,
    ):
        session = await acp.new_session(str(ws))
        turn = asyncio.create_task(acp.prompt(session.session_id, [v2.ContentBlockText(text="write it")]))
        await client.asking.wait()
        await acp.cancel(session.session_id)
        assert (await turn).stop_reason == "cancelled"
    assert not (ws / "notes.txt").exists()
    statuses = [e.raw.get("status") for e in client.events if e.raw.get("toolCallId") == "t2.0"]
    assert statuses == ["pending", "cancelled"]
    wire = agent_messages(log)
    asked = next(m for m in wire if m.get("method") == "session/request_permission")
    assert any(m.get("result") == {"outcome": {"outcome": "cancelled"}} for m in _client_lines(log, asked["id"]))
    check_transcript(log)


def _client_lines(log: Path, request_id: Any) -> list[dict[str, Any]]:
    return [m for d, m in read_log(log) if d == "in" and m.get("id") == request_id and "method" not in m]


async def test_list_and_resume_with_replay_rebuild_the_conversation_in_a_new_process(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """Sessions outlive the process (the engine store); `session/list` shows them with title and
    time; `session/resume` with `replayFrom: start` replays user_message, agent_message and the tool call with
    the live ids before answering; without replayFrom nothing is replayed."""
    llm.enqueue(_write(), Reply(text="All written."))
    data, ws, log = prepare(tmp_path, llm)
    first = Client(["allow_once"])
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=first.handlers(), env=agent_env()) as acp,
    ):
        session = await acp.new_session(str(ws))
        await acp.prompt(session.session_id, [v2.ContentBlockText(text="Write notes")])
    sid = session.session_id
    log2 = tmp_path / "second.log"
    second = Client()
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log2), handlers=second.handlers(), env=agent_env()) as acp,
    ):
        listed = await acp.list_sessions(cwd=str(ws))
        assert [(s.session_id, s.title, s.cwd) for s in listed.sessions] == [(sid, "Write notes", str(ws))]
        assert (await acp.list_sessions(cwd="/nowhere")).sessions == []
        await acp.resume_session(sid, str(ws))
        assert second.events == []
        await acp.resume_session(sid, str(ws), replay=True)
        replayed = [e.raw for e in second.events]
    assert [(u["sessionUpdate"], u.get("messageId") or u.get("toolCallId")) for u in replayed] == [
        ("user_message", "m1"),
        ("tool_call_update", "t2.0"),
        ("agent_message", "m3"),  # the message whole and empty, then its text as the chunk it streamed
        ("agent_message_chunk", "m3"),
    ]
    assert replayed[2]["content"] == [] and replayed[3]["content"] == {"type": "text", "text": "All written."}
    assert replayed[1]["status"] == "completed" and replayed[1]["title"] == "Write notes.txt"
    live_user = next(e.raw for e in first.events if e.raw["sessionUpdate"] == "user_message")
    assert replayed[0] == live_user
    # The replay precedes the resume answer on the wire.
    wire = agent_messages(log2)
    last_update = max(i for i, m in enumerate(wire) if m.get("method") == "session/update")
    assert wire[last_update + 1].get("result") is not None
    check_transcript(log)
    check_transcript(log2)


async def test_config_options_switch_mode_and_refuse_unknown_values(tmp_path: Path, llm: FakeLLMServer) -> None:
    """Part 1 config options: mode `auto` runs a write without asking; an unknown model is -32602; the answer
    carries the options with their new values."""
    llm.enqueue(_write(), Reply(text="ok"))
    data, ws, log = prepare(tmp_path, llm)
    client = Client()
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=agent_env()) as acp,
    ):
        session = await acp.new_session(str(ws))
        changed = await acp.set_config_option(session.session_id, "mode", "auto")
        assert [o.current_value for o in changed.config_options if o.config_id == "mode"] == ["auto"]
        changed = await acp.set_config_option(session.session_id, "reasoning", "high")
        assert [o.current_value for o in changed.config_options if o.config_id == "reasoning"] == ["high"]
        with pytest.raises(RpcError) as bad:
            await acp.set_config_option(session.session_id, "model", "nope/none")
        assert bad.value.code == INVALID_PARAMS
        assert (await acp.prompt(session.session_id, [v2.ContentBlockText(text="go")])).stop_reason == "end_turn"
    assert client.asked == [] and (ws / "notes.txt").exists()
    assert (await llm.wait_for_requests_async(1))[0].body["thinking"]["type"] == "enabled"  # type: ignore[index]
    check_transcript(log)


async def test_bad_requests_get_acp_errors_and_a_prompt_during_a_turn_is_refused(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """Agent decisions (docs/acp.md): an unknown session is -32002, a relative cwd -32602, a prompt while the
    session's turn runs is queued behind it (the session loop's turn rule, as for every agent) and runs once the
    running turn, unaffected, has ended; delete removes the session."""
    llm.enqueue(Reply(text="slow answer " * 20, chunk_size=4, gate="first", hold_after_events=4), Reply(text="two"))
    data, ws, log = prepare(tmp_path, llm)
    client = Client()
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=agent_env()) as acp,
    ):
        with pytest.raises(RpcError) as unknown:
            await acp.prompt("f" * 32, [v2.ContentBlockText(text="hi")])
        assert unknown.value.code == RESOURCE_NOT_FOUND and unknown.value.data == {"sessionId": "f" * 32}
        with pytest.raises(RpcError) as relative:
            await acp.new_session("relative/dir")
        assert relative.value.code == INVALID_PARAMS
        session = await acp.new_session(str(ws))
        turn = asyncio.create_task(acp.prompt(session.session_id, [v2.ContentBlockText(text="first")]))
        await client.wait_kind("agent_message_chunk")
        queued = await acp._call_raw(
            "session/prompt", {"sessionId": session.session_id, "prompt": [{"type": "text", "text": "2"}]}
        )
        assert queued["_meta"]["omniagent"]["delivery"] == "queued"
        llm.release("first")
        assert (await turn).stop_reason == "end_turn"
        while [r.raw.get("state") for r in client.events].count("idle") < 2:
            client.changed.clear()
            await client.changed.wait()
        assert len(llm.requests) == 2
        await acp._call_raw("session/delete", {"sessionId": session.session_id})
        assert (await acp.list_sessions()).sessions == []
    check_transcript(log)


async def test_a_failed_v2_turn_ends_with_the_error_stop_reason_and_says_why(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """docs/acp.md "The v2 draft": a run that fails for good ends the turn idle with the draft's `error` stop reason
    carrying a -32603 error that names the failure, and the failure is also agent text (alpha.2 clients); the prompt
    itself was answered with its receipt. No key on the wire."""
    llm.enqueue(ErrorReply(400, "invalid_request_error", message="bad request from the test"))
    data, ws, log = prepare(tmp_path, llm)
    client = Client()
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=agent_env()) as acp,
    ):
        session = await acp.new_session(str(ws))
        end = await acp.prompt(session.session_id, [v2.ContentBlockText(text="fail")])
    assert end.stop_reason == "error"
    raw = [e.raw for e in client.events]
    idle = raw[-1]
    assert idle["state"] == "idle" and idle["error"]["code"] == INTERNAL_ERROR
    assert idle["error"]["message"].startswith("the turn failed: The provider rejected the request as invalid.")
    said = [r["content"]["text"] for r in raw if r["sessionUpdate"] == "agent_message_chunk"]
    assert said and said[-1].startswith("The turn failed: The provider rejected the request as invalid.")
    assert "test-key" not in log.read_text()
    check_transcript(log)


async def test_media_prompts_are_refused_and_closing_stdin_ends_the_process_cleanly(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """docs/acp.md: an image block is refused with -32602 (no blob store; not advertised); closing stdin ends
    `omniagent acp` with exit 0 and nothing but protocol lines on stdout."""
    data, ws, log = prepare(tmp_path, llm)
    proc = await asyncio.create_subprocess_exec(
        *agent_argv(data, log), env=agent_env(), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": 2, "info": {"name": "t", "version": "1"}},
        },
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(ws)}},
    ]
    proc.stdin.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    async with asyncio.timeout(WAIT):
        answers = [json.loads(await proc.stdout.readline()) for _ in lines]
        sid = answers[1]["result"]["sessionId"]
        image = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
        prompt = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/prompt",
            "params": {"sessionId": sid, "prompt": [image]},
        }
        proc.stdin.write(json.dumps(prompt).encode() + b"\n")
        refused = json.loads(await proc.stdout.readline())
        proc.stdin.close()
        rest = await proc.stdout.read()
        assert await proc.wait() == 0
    assert refused["error"]["code"] == INVALID_PARAMS and "image" in refused["error"]["message"]
    assert rest == b""
    check_transcript(log)


async def test_the_fetch_option_lets_the_fetch_tool_reach_this_machine(tmp_path: Path, llm: FakeLLMServer) -> None:
    """`fetch` is `public` by default (a page on 127.0.0.1 is refused); `private` lets the fetch tool read it, as
    `session.set_sandbox{fetch_private}` does on yuke; unknown values are -32602."""
    with serving({"/docs": (200, {"content-type": "text/html"}, b"<p>The answer is <b>42</b>.</p>")}) as pages:
        page = pages.url("/docs")
        fetch = Reply(tool_calls=(FakeToolCall("fetch", {"url": page}, "call_f"),))
        llm.enqueue(fetch, Reply(text="refused"), fetch, Reply(text="read"))
        data, ws, log = prepare(tmp_path, llm)
        async with asyncio.timeout(WAIT), open_acp_client(agent_argv(data, log), env=agent_env()) as acp:
            session = await acp.new_session(str(ws))
            assert {o.config_id: o.current_value for o in session.config_options}["fetch"] == "public"
            await acp.set_config_option(session.session_id, "mode", "auto")
            assert (await acp.prompt(session.session_id, [v2.ContentBlockText(text="read")])).stop_reason == "end_turn"
            changed = await acp.set_config_option(session.session_id, "fetch", "private")
            assert [o.current_value for o in changed.config_options if o.config_id == "fetch"] == ["private"]
            assert (await acp.prompt(session.session_id, [v2.ContentBlockText(text="again")])).stop_reason == "end_turn"
            with pytest.raises(RpcError) as bad:
                await acp.set_config_option(session.session_id, "fetch", "everywhere")
            assert bad.value.code == INVALID_PARAMS
            assert bad.value.message == "invalid configuration: `everywhere` is not a choice of `fetch`"
    results = [json.dumps(r.body) for r in llm.requests if "call_f" in json.dumps(r.body)]
    assert "The answer is 42." not in results[0] and "The answer is 42." in results[-1]
    check_transcript(log)


async def test_sandbox_and_network_options_switch_the_exec_sandbox(tmp_path: Path, llm: FakeLLMServer) -> None:
    """Issue 9 part 1: `sandbox` and `network` are config options like `mode`; an unsandboxed exec asks even in
    auto mode (the ask says it runs outside the sandbox); unknown values are -32602."""
    llm.enqueue(Reply(tool_calls=(FakeToolCall("exec", {"command": "echo hi > out.txt"}, "call_x"),)), Reply(text="ok"))
    data, ws, log = prepare(tmp_path, llm)
    client = Client(["allow_once"])
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=agent_env()) as acp,
    ):
        session = await acp.new_session(str(ws))
        current = {o.config_id: o.current_value for o in session.config_options}
        assert (current["sandbox"], current["network"]) == ("sandboxed", "off")
        await acp.set_config_option(session.session_id, "mode", "auto")
        changed = await acp.set_config_option(session.session_id, "network", "allowlist")
        assert [o.current_value for o in changed.config_options if o.config_id == "network"] == ["allowlist"]
        changed = await acp.set_config_option(session.session_id, "network", "on")
        assert [o.current_value for o in changed.config_options if o.config_id == "network"] == ["on"]
        changed = await acp.set_config_option(session.session_id, "sandbox", "unsandboxed")
        assert [o.current_value for o in changed.config_options if o.config_id == "sandbox"] == ["unsandboxed"]
        for config_id in ("sandbox", "network"):
            with pytest.raises(RpcError) as bad:
                await acp.set_config_option(session.session_id, config_id, "maybe")
            assert bad.value.code == INVALID_PARAMS
        assert (await acp.prompt(session.session_id, [v2.ContentBlockText(text="go")])).stop_reason == "end_turn"
    assert len(client.asked) == 1
    assert client.asked[0].title == "Run `echo hi > out.txt` in the workspace, outside the sandbox."
    assert (ws / "out.txt").read_text() == "hi\n"
    check_transcript(log)

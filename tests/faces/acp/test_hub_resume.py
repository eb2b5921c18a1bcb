"""`omniagent acp --agent ID` sessions outlive the process: a later process (an editor's next connection) resumes a
session an earlier one opened, under its id, and the agent goes on with the conversation; a session live in one
process is not resumed by another sharing the data dir. Our engine is the agent here (it resumes by token), against
the fake LLM, each face a real subprocess."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.runtime.adapters.engine.harness import WAIT, bodies, child_env, workspace

RESOURCE_NOT_FOUND, INVALID_REQUEST = -32002, -32600


class Face:
    """One `omniagent acp --agent omniagent` process, spoken to in v1 line by line (permission requests allowed)."""

    def __init__(self, proc: asyncio.subprocess.Process, stderr: Path) -> None:
        self.proc = proc
        self.stderr = stderr
        self.updates: list[dict[str, Any]] = []
        self._ids = 0

    @classmethod
    async def start(cls, env: dict[str, str], stderr: Path) -> Face:
        """Start the face; its log goes to the file `stderr` (a pipe nobody reads could fill and stall it)."""
        argv = [sys.executable, "-m", "omniagent", "acp", "--agent", "omniagent"]
        pipe = asyncio.subprocess.PIPE
        with stderr.open("wb") as log:
            proc = await asyncio.create_subprocess_exec(*argv, stdin=pipe, stdout=pipe, stderr=log, env=env)
        return cls(proc, stderr)

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The answer (`result` or `error`) to one request; the updates before it are kept."""
        self._ids += 1
        self._send({"id": self._ids, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            message = json.loads(await self.proc.stdout.readline())
            if message.get("method") == "session/update":
                self.updates.append(message["params"]["update"])
            elif message.get("method") == "session/request_permission":
                outcome = {"outcome": "selected", "optionId": "allow_once"}
                self._send({"id": message["id"], "result": {"outcome": outcome}})
            elif message.get("id") == self._ids and "method" not in message:
                return message

    def text(self) -> str:
        return "".join(u["content"]["text"] for u in self.updates if u["sessionUpdate"] == "agent_message_chunk")

    async def end(self) -> int:
        """Close stdin (the editor goes away) and wait for the exit."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        await self.proc.communicate()
        assert self.proc.returncode == 0, self.stderr.read_text()[-2000:]
        return self.proc.returncode


def _prompt(session_id: str, text: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


async def test_a_later_process_resumes_the_session_and_the_conversation_goes_on(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    scenario = Scenario([Reply(text="first answer"), Reply(text="second answer")], fallback=Reply(text="more"))
    async with FakeLLMServer(scenario) as llm, asyncio.timeout(WAIT * 6):
        env = child_env(tmp_path, llm)
        first = await Face.start(env, tmp_path / "first.stderr")
        init = (await first.call("initialize", {"protocolVersion": 1}))["result"]
        capabilities = init["agentCapabilities"]
        # Our engine keeps every conversation: an earlier process's session loads with it.
        assert "resume" in capabilities["sessionCapabilities"] and capabilities["loadSession"] is True
        opened = await first.call("session/new", {"cwd": str(ws), "mcpServers": []})
        session_id = opened["result"]["sessionId"]
        said = await first.call("session/prompt", _prompt(session_id, "remember the word kumquat"))
        assert said["result"] == {"stopReason": "end_turn"}
        await first.end()

        later = await Face.start(env, tmp_path / "later.stderr")
        await later.call("initialize", {"protocolVersion": 1})
        [listed] = (await later.call("session/list", {}))["result"]["sessions"]
        assert listed["sessionId"] == session_id and listed["_meta"]["omniagent"]["resumable"] is True
        unknown = await later.call("session/resume", {"sessionId": "s99", "cwd": str(ws), "mcpServers": []})
        assert unknown["error"]["code"] == RESOURCE_NOT_FOUND
        resumed = await later.call("session/resume", {"sessionId": session_id, "cwd": str(ws), "mcpServers": []})
        assert resumed["result"]["_meta"]["omniagent"]["agent"] == "omniagent"

        # Another editor's process, sharing the data dir, while the session is live in `later`.
        other = await Face.start(env, tmp_path / "other.stderr")
        await other.call("initialize", {"protocolVersion": 1})
        refused = await other.call("session/resume", {"sessionId": session_id, "cwd": str(ws), "mcpServers": []})
        assert refused["error"]["code"] == INVALID_REQUEST and "another process" in refused["error"]["message"]
        await other.end()

        went_on = await later.call("session/prompt", _prompt(session_id, "which word?"))
        assert went_on["result"] == {"stopReason": "end_turn"} and later.text() == "second answer"
        await later.end()
        second = (await bodies(llm, 2))[1]
    assert "kumquat" in str(second["messages"][0]) and "first answer" in str(second["messages"][1])


async def test_a_later_process_replays_the_earlier_conversation_of_our_engine_on_load_and_resume_with_replay(
    tmp_path: Path,
) -> None:
    """Our engine tells a resumed session's stored conversation (the hub asks for its history): a later process's v1
    `session/load` and v2 `session/resume` with `replayFrom: start` replay the prompt, the tool call (its final
    status, output and diff) and the answer, with the ids the live turn used, before they answer."""
    ws = workspace(tmp_path)
    write = FakeToolCall("write", {"path": "hello.txt", "content": "hello\n"})
    scenario = Scenario([Reply(tool_calls=(write,)), Reply(text="All done.")], fallback=Reply(text="Still here."))
    async with FakeLLMServer(scenario) as llm, asyncio.timeout(WAIT * 6):
        env = child_env(tmp_path, llm)
        first = await Face.start(env, tmp_path / "first.stderr")
        await first.call("initialize", {"protocolVersion": 1})
        session_id = (await first.call("session/new", {"cwd": str(ws), "mcpServers": []}))["result"]["sessionId"]
        said = await first.call("session/prompt", _prompt(session_id, "write hello.txt"))
        assert said["result"] == {"stopReason": "end_turn"} and (ws / "hello.txt").read_text() == "hello\n"
        await first.end()
        tool = [u for u in first.updates if u["sessionUpdate"] in ("tool_call", "tool_call_update")][-1]
        answer = [u for u in first.updates if u["sessionUpdate"] == "agent_message_chunk"]
        assert tool["toolCallId"] == "t2.0" and tool["status"] == "completed"
        assert {u["messageId"] for u in answer} == {"m3"} and first.text() == "All done."

        later = await Face.start(env, tmp_path / "later.stderr")
        await later.call("initialize", {"protocolVersion": 1})
        loaded = await later.call("session/load", {"sessionId": session_id, "cwd": str(ws), "mcpServers": []})
        assert "result" in loaded
        # Every update below came before the answer (`call` reads up to it).
        assert later.updates == [
            {
                "sessionUpdate": "user_message_chunk",
                "messageId": "m1",
                "content": {"type": "text", "text": "write hello.txt"},
            },
            tool | {"sessionUpdate": "tool_call"},  # the live call's last snapshot, created whole
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m3",
                "content": {"type": "text", "text": "All done."},
            },
        ]
        went_on = await later.call("session/prompt", _prompt(session_id, "and now?"))
        assert went_on["result"] == {"stopReason": "end_turn"} and later.text().endswith("Still here.")
        await later.end()

        v2 = await Face.start(env, tmp_path / "v2.stderr")
        await v2.call("initialize", {"protocolVersion": 2})
        params = {"sessionId": session_id, "cwd": str(ws), "replayFrom": {"type": "start"}}
        assert "result" in await v2.call("session/resume", params)
        replayed = [(u["sessionUpdate"], u.get("messageId") or u.get("toolCallId")) for u in v2.updates]
        # A message whole and empty (the draft's primer), then its text as the chunk it streamed.
        primed = [("agent_message", "m3"), ("agent_message_chunk", "m3")]
        assert replayed[:4] == [("user_message", "m1"), ("tool_call_update", "t2.0"), *primed]
        assert v2.updates[0]["content"] == [{"type": "text", "text": "write hello.txt"}]
        assert v2.updates[1]["status"] == "completed" and v2.updates[1]["title"] == tool["title"]
        # The turn `later` ran is history now too: its prompt, then its answer.
        assert replayed[4:] == [("user_message", "m4"), ("agent_message", "m5"), ("agent_message_chunk", "m5")]
        await v2.end()

"""Skills over a real `omniagent rpc` subprocess (docs/engine.md, "Skills"): found in the project and personal
locations when a session starts, listed by the `skills.list` extension, offered to the model in the system prompt
with a `skill` tool, run by a user with `Input.skill` (arguments substituted), and an unknown one refused."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from omniagent.engine.skills.catalog import SKILLS_LIST_METHOD
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply
from tests.engine.rpc_harness import RpcProcess, write_providers

MODEL = "fake-chat/fake-model"
REVIEW = (
    "---\n"
    "name: review\n"
    "description: Review code for bugs. Use when: the user asks for a review.\n"
    "argument-hint: <path>\n"
    "---\n"
    "Read $ARGUMENTS and list every bug you find.\n"
)


def _write_skill(root: Path, folder: str, text: str) -> None:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace with a project skill (shadowing a personal one of the same name), a personal skill in Claude
    Code's folder, a user-only one in the engine's config dir, and a broken one."""
    ws, home, data = tmp_path / "ws", tmp_path / "home", tmp_path / "data"
    _write_skill(ws / ".agents" / "skills", "review", REVIEW)
    _write_skill(ws / ".claude" / "skills", "broken", "---\nname: broken\n---\nno description\n")
    _write_skill(home / ".agents" / "skills", "review", "---\nname: review\ndescription: personal review\n---\nx\n")
    _write_skill(home / ".claude" / "skills", "commit", "---\nname: commit\ndescription: Write a commit.\n---\nGo.\n")
    notes = "---\nname: notes\ndescription: Take notes.\ndisable-model-invocation: true\n---\nNote $ARGUMENTS.\n"
    _write_skill(data / "skills", "notes", notes)
    return ws


@pytest.fixture
async def rpc(tmp_path: Path, llm: FakeLLMServer, workspace: Path) -> AsyncIterator[RpcProcess]:
    write_providers(tmp_path / "data", llm)
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": ""}
    proc = await RpcProcess.start(tmp_path / "data", env)
    try:
        yield proc
    finally:
        await proc.close()


async def _session(rpc: RpcProcess, workspace: Path) -> str:
    result = await rpc.call("session.create", {"workspace_path": str(workspace), "model": MODEL})
    return str(result["session"]["id"])


def _skill_input(name: str, arguments: str) -> dict[str, Any]:
    return {"type": "skill", "skill": {"name": name, "arguments": arguments}}


async def test_skills_are_listed_with_their_scope_and_hint(rpc: RpcProcess, workspace: Path) -> None:
    """The project's `review` wins over the personal one; a skill without a description is skipped (and logged)."""
    sid = await _session(rpc, workspace)
    listed = await rpc.call(SKILLS_LIST_METHOD, {"session_id": sid})
    assert listed == {
        "skills": [
            {"name": "commit", "description": "Write a commit.", "scope": "personal", "argument_hint": ""},
            {"name": "notes", "description": "Take notes.", "scope": "personal", "argument_hint": ""},
            {
                "name": "review",
                "description": "Review code for bugs. Use when: the user asks for a review.",
                "scope": "project",
                "argument_hint": "<path>",
            },
        ]
    }
    assert await rpc.call_error(SKILLS_LIST_METHOD, {"session_id": "0" * 32}) == ErrorCode.UNKNOWN_SESSION
    assert await rpc.close() == 0
    stderr = await rpc.stderr()
    assert "skipped the skill in" in stderr and "the description is missing" in stderr


async def test_a_literal_block_description_keeps_its_lines(
    rpc: RpcProcess, llm: FakeLLMServer, workspace: Path
) -> None:
    """A `|` description keeps the author's line breaks (less the block's indentation and its final newline) in
    `skills.list` and in the catalog the model reads; a `>` one is folded as YAML folds it."""
    triage = (
        "---\n"
        "name: triage\n"
        "description: |\n"
        "  Sort incoming bug reports.\n"
        "  Use when:\n"
        "    - the user pastes a report\n"
        "    - the user asks what to fix first\n"
        "---\n"
        "Sort them.\n"
    )
    _write_skill(workspace / ".omniagent" / "skills", "triage", triage)
    folded = "---\nname: tidy\ndescription: >\n  Tidy\n  imports.\n\n  Use when asked.\n---\nTidy.\n"
    _write_skill(workspace / ".omniagent" / "skills", "tidy", folded)
    llm.enqueue(Reply(text="ok"))
    sid = await _session(rpc, workspace)
    listed = {s["name"]: s["description"] for s in (await rpc.call(SKILLS_LIST_METHOD, {"session_id": sid}))["skills"]}
    lines = "Sort incoming bug reports.\nUse when:\n  - the user pastes a report\n  - the user asks what to fix first"
    assert listed["triage"] == lines
    assert listed["tidy"] == "Tidy imports.\nUse when asked."
    await rpc.call("session.send_input", {"session_id": sid, "input": {"type": "content", "content": [
        {"type": "text", "text": "hello"}
    ]}})  # fmt: skip
    await rpc.broadcast("run.done")
    (request,) = await llm.wait_for_requests_async(1)
    assert isinstance(request.body, dict)
    assert f"<name>triage</name><description>{lines}</description>" in request.body["messages"][0]["content"]


async def test_a_skill_runs_with_its_arguments(rpc: RpcProcess, llm: FakeLLMServer, workspace: Path) -> None:
    """`Input.skill` commits a user message carrying the skill, whose content is the command line and the skill's
    instructions with `$ARGUMENTS` replaced; that is what the model reads. The title is the command line."""
    llm.enqueue(Reply(text="two bugs"))
    sid = await _session(rpc, workspace)
    start = len(rpc.lines)
    sent = await rpc.call("session.send_input", {"session_id": sid, "input": _skill_input("review", "src/app.py")})
    assert sent["type"] == "started"
    committed = rpc.lines[await rpc.broadcast("message.committed", after=start)]["params"]["message"]
    assert committed["type"] == "user" and committed["skill"] == {"name": "review", "arguments": "src/app.py"}
    text = committed["content"][0]["text"]
    assert text.startswith("/review src/app.py\n")
    assert "Read src/app.py and list every bug you find." in text and "$ARGUMENTS" not in text
    assert str(workspace / ".agents" / "skills" / "review") in text  # where its relative paths resolve
    await rpc.broadcast("run.done", after=start)
    (request,) = await llm.wait_for_requests_async(1)
    assert isinstance(request.body, dict)
    assert request.body["messages"][-1] == {"role": "user", "content": text}
    summary = await rpc.call("session.get", {"session_id": sid})
    assert summary["session"]["title"] == "/review src/app.py"


async def test_an_unknown_skill_is_refused_and_nothing_is_committed(rpc: RpcProcess, workspace: Path) -> None:
    sid = await _session(rpc, workspace)
    start = len(rpc.lines)
    unknown = {"session_id": sid, "input": _skill_input("deploy", "prod")}
    assert await rpc.call_error("session.send_input", unknown) == ErrorCode.UNKNOWN_SKILL
    broken = {"session_id": sid, "input": _skill_input("broken", "")}
    assert await rpc.call_error("session.send_input", broken) == ErrorCode.UNKNOWN_SKILL
    assert "message.committed" not in rpc.names(start)
    create = {"workspace_path": str(workspace), "model": MODEL, "initial_input": _skill_input("deploy", "")}
    assert await rpc.call_error("session.create", create) == ErrorCode.UNKNOWN_SKILL
    assert (await rpc.call("session.list"))["total"] == 1


async def test_the_model_sees_the_catalog_and_loads_a_skill_with_the_tool(
    rpc: RpcProcess, llm: FakeLLMServer, workspace: Path
) -> None:
    """The system prompt lists the skills the model may use (not a `disable-model-invocation` one); the `skill`
    tool (its name an enum of them) returns a skill's instructions as its result."""
    llm.enqueue(
        Reply(tool_calls=(FakeToolCall("skill", {"name": "review", "arguments": "lib.py"}),)),
        Reply(text="reviewed"),
    )
    sid = await _session(rpc, workspace)
    await rpc.call("session.send_input", {"session_id": sid, "input": {"type": "content", "content": [
        {"type": "text", "text": "please review lib.py"}
    ]}})  # fmt: skip
    await rpc.broadcast("run.done")
    first, second = await llm.wait_for_requests_async(2)
    assert isinstance(first.body, dict) and isinstance(second.body, dict)
    system = first.body["messages"][0]
    assert system["role"] == "system"
    assert "<name>review</name>" in system["content"] and "<name>commit</name>" in system["content"]
    assert "notes" not in system["content"]
    (tool,) = [t["function"] for t in first.body["tools"] if t["function"]["name"] == "skill"]
    assert tool["parameters"]["properties"]["name"]["enum"] == ["commit", "review"]
    result = next(m for m in second.body["messages"] if m["role"] == "tool")
    assert "Read lib.py and list every bug you find." in result["content"]
    assert second.body["messages"][0] == system  # the same system prompt on every request of the session


async def test_a_session_without_skills_has_no_catalog_and_no_skill_tool(llm: FakeLLMServer, tmp_path: Path) -> None:
    """A workspace and a home without skills: no section in the system prompt, no `skill` tool."""
    llm.enqueue(Reply(text="hi"))
    bare, home = tmp_path / "bare", tmp_path / "bare-home"
    bare.mkdir()
    home.mkdir()
    write_providers(tmp_path / "bare-data", llm)
    rpc = await RpcProcess.start(tmp_path / "bare-data", {"HOME": str(home), "CLAUDE_CONFIG_DIR": ""})
    try:
        sid = await _session(rpc, bare)
        assert await rpc.call(SKILLS_LIST_METHOD, {"session_id": sid}) == {"skills": []}
        await rpc.call("session.send_input", {"session_id": sid, "input": {"type": "content", "content": [
            {"type": "text", "text": "hello"}
        ]}})  # fmt: skip
        await rpc.broadcast("run.done")
    finally:
        await rpc.close()
    (request,) = await llm.wait_for_requests_async(1)
    assert isinstance(request.body, dict)
    assert "skill" not in [t["function"]["name"] for t in request.body["tools"]]
    assert "available_skills" not in request.body["messages"][0]["content"]


async def test_a_skill_sent_while_busy_is_queued_and_keeps_its_skill(
    rpc: RpcProcess, llm: FakeLLMServer, workspace: Path
) -> None:
    """A skill input behind an active run is queued (`input.queued` shows its content); the turn that drains the
    queue commits it as a user message that still names the skill it ran."""
    llm.enqueue(Reply(text="first answer", gate="busy"), Reply(text="reviewed"))
    sid = await _session(rpc, workspace)
    await rpc.call("session.send_input", {"session_id": sid, "input": {"type": "content", "content": [
        {"type": "text", "text": "start"}
    ]}})  # fmt: skip
    assert await llm.wait_held_async("busy")
    queued = await rpc.call("session.send_input", {"session_id": sid, "input": _skill_input("review", "a.py")})
    assert queued["type"] == "queued"
    items = (await rpc.call("session.queue", {"session_id": sid}))["items"]
    assert items[0]["content"][0]["text"].startswith("/review a.py\n")
    start = len(rpc.lines)
    llm.release("busy")
    where = lambda p: p["message"]["type"] == "user"  # noqa: E731
    committed = rpc.lines[await rpc.broadcast("message.committed", after=start, where=where)]["params"]["message"]
    assert committed["skill"] == {"name": "review", "arguments": "a.py"}

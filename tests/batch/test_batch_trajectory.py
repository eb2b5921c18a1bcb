"""`trajectory.json`: each batch run as an ATIF-v1.7 trajectory (docs/batch.md), built from the run's events.

Real batches of our engine against the fake LLM: a run that thinks, writes a file, reads the tool's result and
answers; a run whose agent spawns a child agent (a subagent trajectory). Then the rules that cut a stream without
message boundaries (as ACP agents send theirs) into steps, on the events such an agent produces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from omniagent import __version__
from omniagent.batch import TaskResult, load_tasks, run, trajectory
from omniagent.batch.results import AgentInfo, Status, Timings
from omniagent.protocols.sidecar.base import SystemTime
from omniagent.protocols.sidecar.events import (
    ContextUsage,
    Event,
    EventKind,
    Execute,
    FromPrompt,
    PermissionAsk,
    PermissionChoice,
    PermissionRequest,
    RawTool,
    RequestOpened,
    TextDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
    TurnContext,
    TurnStarted,
    UserMessage,
)
from omniagent.testing import FakeLLMServer, FakeToolCall, FakeUsage, Reply, Scenario
from tests.batch import atif, harbor_validator
from tests.batch.support import trajectory as read_trajectory
from tests.batch.support import write_tasks
from tests.runtime.adapters.engine.harness import use_engine

pytestmark = pytest.mark.timeout(120)
THOUGHT = "The file does not exist yet, so I write it."
AFTER = "The write worked; I can answer."


async def _run(tmp_path: Path, items: list[dict[str, Any]]) -> dict[str, TaskResult]:
    task_file = write_tasks(tmp_path / "tasks.jsonl", items)
    return {result.task: result async for result in run(load_tasks(task_file), out=tmp_path / "out")}


def _cost(step: dict[str, Any]) -> float:
    return float(step["metrics"]["cost_usd"])


async def test_a_run_that_thinks_writes_reads_the_result_and_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prompt is the user step; each model answer an agent step with its reasoning and text; the write call
    and its result share an id; each step's metrics are its answer's usage report, and the totals add up."""
    write = FakeToolCall("write", {"path": "notes.txt", "content": "NOTES\n"}, "call_write")
    scenario = Scenario(
        [
            Reply(reasoning=THOUGHT, text="Writing it.", tool_calls=(write,), match="NOTE-MARK", usage=FakeUsage(90)),
            Reply(reasoning=AFTER, text="notes.txt is written.", match="call_write", usage=FakeUsage(150, 11)),
        ]
    )
    item = {"id": "notes", "prompt": "NOTE-MARK: write notes.txt", "agent": "omniagent", "permissions": "auto"}
    async with FakeLLMServer(scenario) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        result = (await _run(tmp_path, [item]))["notes"]
    assert result.status is Status.COMPLETED and result.agent_info is not None
    found = read_trajectory(tmp_path / "out", "notes", "omniagent")

    assert found["agent"] == {"name": "omniagent", "version": __version__, "model_name": result.agent_info.model}
    assert result.agent_info.session_id is not None and found["session_id"] == result.agent_info.session_id
    assert found["extra"] == {"task": "notes", "agent": "omniagent", "status": "completed"}
    asked, wrote, answered = found["steps"]
    assert asked == {"step_id": 1, "timestamp": asked["timestamp"], "source": "user", "message": item["prompt"]}
    assert (wrote["source"], wrote["reasoning_content"], wrote["message"]) == ("agent", THOUGHT, "Writing it.")
    (call,) = wrote["tool_calls"]
    assert (call["function_name"], call["arguments"]) == ("write", {"path": "notes.txt", "content": "NOTES\n"})
    (seen,) = wrote["observation"]["results"]
    assert seen["source_call_id"] == call["tool_call_id"]
    assert "notes.txt" in seen["content"] and seen["extra"] == {"status": "Completed"}
    assert (answered["reasoning_content"], answered["message"]) == (AFTER, result.text)
    assert "tool_calls" not in answered and "observation" not in answered
    # Each answer's usage report: the context it filled (prompt and answer) and what it cost.
    assert wrote["metrics"]["extra"]["context_tokens"] == 90 + 7
    assert answered["metrics"]["extra"]["context_tokens"] == 150 + 11
    assert _cost(wrote) > 0 and _cost(answered) > _cost(wrote)
    final = found["final_metrics"]
    assert final["total_steps"] == 3
    assert final["total_cost_usd"] == result.usage.cost_usd
    assert final["total_cost_usd"] == pytest.approx(_cost(wrote) + _cost(answered))
    assert final["extra"]["context_tokens"] == result.usage.context_tokens


async def test_a_child_agent_is_a_subagent_trajectory_the_spawning_call_refers_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parent's spawn_agent call and the child's report (its result) are a step of the run's trajectory; the
    child's own steps (a read and its answer) are an embedded subagent trajectory, referenced from that result."""
    (tmp_path / "source").mkdir()
    (tmp_path / "source" / "facts.txt").write_text("FACT-42\n")
    spawn = FakeToolCall("spawn_agent", {"name": "scout", "task": "SCOUT-TASK: read facts.txt"}, "call_scout")
    read = FakeToolCall("read", {"path": "facts.txt"}, "call_read")
    scenario = Scenario(
        [
            Reply(text="The scout found FACT-42.", match="Report from the child agent", sticky=True),
            Reply(tool_calls=(spawn,), match="PARENT-MARK"),
            Reply(text="Reading.", tool_calls=(read,), match="SCOUT-TASK"),
            Reply(text="facts.txt says FACT-42", match="call_read"),
        ]
    )
    item = {"id": "scout", "prompt": "PARENT-MARK", "agent": "omniagent", "permissions": "auto"}
    async with FakeLLMServer(scenario) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        result = (await _run(tmp_path, [item | {"workspace": {"copy": "source"}}]))["scout"]
    assert result.status is Status.COMPLETED, result.error
    found = read_trajectory(tmp_path / "out", "scout", "omniagent")

    asked, spawned, answered = found["steps"]
    assert asked["message"] == "PARENT-MARK" and answered["message"] == "The scout found FACT-42."
    (call,) = spawned["tool_calls"]
    assert call["function_name"] == "spawn_agent" and call["arguments"]["name"] == "scout"
    (report,) = spawned["observation"]["results"]
    assert report["source_call_id"] == call["tool_call_id"]
    assert "facts.txt says FACT-42" in report["content"]
    assert report["subagent_trajectory_ref"] == [{"trajectory_id": call["tool_call_id"]}]

    (child,) = found["subagent_trajectories"]
    assert child["trajectory_id"] == call["tool_call_id"]
    assert child["agent"] == {"name": "omniagent", "version": __version__}
    reading, told = child["steps"]
    (child_call,) = reading["tool_calls"]
    assert (reading["message"], child_call["function_name"]) == ("Reading.", "read")
    (child_seen,) = reading["observation"]["results"]
    assert child_seen["source_call_id"] == child_call["tool_call_id"] and "FACT-42" in child_seen["content"]
    assert told["message"] == "facts.txt says FACT-42"
    assert child["final_metrics"] == {"total_steps": 2}
    # Every reply costs $0.000141 (the fake's default usage): the session's cost counts the child's two, the run's
    # total is it, the answer's step grew it by its own and the child's meanwhile, the child claims no total.
    assert found["final_metrics"]["total_cost_usd"] == result.usage.cost_usd == pytest.approx(4 * 0.000141)
    assert (_cost(spawned), _cost(answered)) == (pytest.approx(0.000141), pytest.approx(3 * 0.000141))


# --- cutting a stream without message boundaries into steps -------------------------------------------------


def _events(*kinds: EventKind) -> list[Event]:
    turn = TurnContext("t1")
    at = SystemTime(1_800_000_000, 0)
    return [Event(number, at, "s1", turn, kind) for number, kind in enumerate(kinds, start=1)]


def _tool(tool_id: str, status: ToolStatus, output: str | None = None) -> ToolUpdate:
    raw = RawTool(name="", input={"command": ["bash", "-lc", f"echo {tool_id}"]})
    return ToolUpdate(id=tool_id, kind=Execute(), title=f"echo {tool_id}", status=status, output=output, raw=raw)


def test_a_stream_without_message_ids_is_cut_where_a_new_answer_must_have_begun() -> None:
    """As an ACP agent sends them (every text under one message id, no usage report between answers): text and
    the call made with it are one step; a call made once that call has settled is the next answer; text after it
    the one after; a call the agent only asked permission for is a call without a result; user content the agent
    reports is a user step."""
    denied = PermissionRequest(id="r1", tool=_tool("c3", ToolStatus.PENDING), options=[PermissionChoice.DENY_ONCE])
    events = _events(
        TurnStarted(origin=FromPrompt(prompt_id="p1")),
        TextDelta(message_id="m0", text="Let me look. "),
        ToolUpdated(tool=_tool("c1", ToolStatus.PENDING)),
        ToolUpdated(tool=_tool("c1", ToolStatus.COMPLETED, "c1")),
        ToolUpdated(tool=_tool("c2", ToolStatus.PENDING)),
        ToolUpdated(tool=_tool("c2", ToolStatus.FAILED, "no such thing")),
        TextDelta(message_id="m0", text="One more."),
        RequestOpened(request=PermissionAsk(request=denied)),
        UserMessage(message_id="u1", text="a hook's note"),
        TextDelta(message_id="m0", text="Done."),
        ContextUsage(used_tokens=500, window_tokens=1000, cost_usd=None),
    )
    result = TaskResult(
        task="t",
        agent="codex-acp",
        status=Status.COMPLETED,
        timings=Timings(started_at=1_800_000_000.0),
        agent_info=AgentInfo(name="Codex (ACP)", version="0.16.0"),
    )
    found = msgspec.to_builtins(trajectory.build(events, prompt="Look around", result=result))
    atif.validate(found)
    steps = found["steps"]
    assert [(s["source"], s["message"]) for s in steps] == [
        ("user", "Look around"),
        ("agent", "Let me look. "),
        ("agent", ""),
        ("agent", "One more."),
        ("user", "a hook's note"),
        ("agent", "Done."),
    ]
    assert [c["tool_call_id"] for c in steps[1]["tool_calls"]] == ["c1"]
    assert steps[1]["tool_calls"][0]["function_name"] == "execute"  # no name given: the kind of tool
    assert steps[1]["tool_calls"][0]["arguments"] == {"command": ["bash", "-lc", "echo c1"]}
    assert steps[2]["observation"]["results"] == [
        {"source_call_id": "c2", "content": "no such thing", "extra": {"status": "Failed"}}
    ]
    assert [c["tool_call_id"] for c in steps[3]["tool_calls"]] == ["c3"] and "observation" not in steps[3]
    assert steps[5]["metrics"] == {"extra": {"context_tokens": 500, "context_window": 1000}}
    assert found["agent"] == {"name": "Codex (ACP)", "version": "0.16.0"}
    assert found["final_metrics"] == {"total_steps": 6, "extra": {"context_tokens": 500, "context_window": 1000}}


def test_harbors_own_validator_is_consulted_and_refuses_what_harbor_refuses() -> None:
    """The second check is real: Harbor's validator (the pinned wheel's) passes a minimal trajectory and names the
    field of one whose step has a source ATIF does not know, and `atif.validate` reports its words."""
    valid = {
        "schema_version": atif.VERSION,
        "session_id": "s1",
        "agent": {"name": "omniagent", "version": __version__},
        "steps": [{"step_id": 1, "source": "user", "message": "hi"}],
    }
    assert harbor_validator.errors(valid) == []
    atif.validate(valid)
    broken = valid | {"steps": [{"step_id": 1, "source": "robot", "message": "hi"}]}
    found = harbor_validator.errors(broken)
    assert len(found) == 1 and found[0].startswith("trajectory.steps.0.source:"), found
    with pytest.raises(atif.InvalidTrajectory, match=r"Harbor's validator: trajectory\.steps\.0\.source"):
        atif.validate(broken)

"""The pure broadcast → event mapping of the engine adapter, fed the engine's own typed broadcasts."""

from __future__ import annotations

import json
import weakref

from omniagent.engine.api import TurnEnded
from omniagent.engine.events import SessionFeed
from omniagent.protocols.sidecar.events import (
    Cancelled,
    Completed,
    ContextCompacted,
    ContextUsage,
    Edit,
    Failed,
    FileDiff,
    MessageEnded,
    OtherTool,
    PathInput,
    PatternInput,
    PlanEntry,
    PlanStatus,
    PlanUpdated,
    Read,
    ReasoningDelta,
    Refused,
    Search,
    StopLimit,
    Subagent,
    TextDelta,
    ToolStatus,
    ToolUpdated,
    UserMessage,
)
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.content import ContentText, SkillRef
from omniagent.protocols.yuke.inputs import ChildReport
from omniagent.protocols.yuke.messages import (
    AssistantMessage,
    CompactionMessage,
    CreatedTime,
    MessageCommittedData,
    MessagePartAddedData,
    MessageTime,
    ReasoningPart,
    TextPart,
    ToolPart,
    ToolStateChangedData,
)
from omniagent.protocols.yuke.messages import UserMessage as StoredPrompt
from omniagent.protocols.yuke.runs import (
    RunCanceledTiming,
    RunDoneData,
    RunOutcome,
    RunOutcomeCanceled,
    RunOutcomeCompacted,
    RunOutcomeFailed,
    RunOutcomeTurn,
)
from omniagent.protocols.yuke.tools import (
    DiffFile,
    DiffHunk,
    ToolStateCompleted,
    ToolStateError,
    ToolStatePending,
    ViewDiff,
)
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.engine.translate import Translator, interaction_of, request_id, stop_reason
from tests.sidecar_schema import validate

SID = "0" * 32
ROOT = "/srv/project"


_FEEDS: weakref.WeakKeyDictionary[Translator, SessionFeed] = weakref.WeakKeyDictionary()


def _map(translator: Translator, name: str, data: YukeModel) -> list[d.DriverEvent]:
    """One broadcast through the session's feed (as the engine's subscription reads it), then the translator; a
    `run.done` ends the turn as the adapter ends it once the tree has settled (`TurnEnded` → `TurnStopped`)."""
    feed = _FEEDS.setdefault(translator, SessionFeed(SID, lambda _: None))
    events = [event for item in feed.read(name, data) for event in translator.map(item)]
    if isinstance(data, RunDoneData):
        ended = TurnEnded(data, canceled=False)
        events.append(d.TurnStopped(stop_reason(ended.last_run.outcome)))
    return events


def _added(translator: Translator, name: str, args: dict[str, object], part_id: int = 0) -> ToolUpdated:
    part = ToolPart(id=part_id, name=name, arguments=json.dumps(args), state=ToolStatePending())
    (event,) = _map(translator, "message.part_added", MessagePartAddedData(session_id=SID, message_id=4, part=part))
    assert isinstance(event, d.AdapterEvent) and isinstance(event.kind, ToolUpdated)
    validate("ToolUpdate", event.kind.tool.dump())
    return event.kind


def test_tool_kinds_and_inputs_follow_the_tool_name() -> None:
    """Issue: read → Read, write/edit → Edit, search → Search (input Path / Pattern); others are Other."""
    translator = Translator(SID, ROOT)
    read = _added(translator, "read", {"path": "src/a.py"}).tool
    assert (read.kind, read.input, read.locations) == (
        Read(),
        PathInput(path="/srv/project/src/a.py"),
        ["/srv/project/src/a.py"],
    )
    assert (read.id, read.title) == ("t4.0", "Read src/a.py")
    search = _added(translator, "search", {"regex": "TODO"}, part_id=1).tool
    assert (search.kind, search.input, search.title) == (Search(), PatternInput(pattern="TODO"), "Search TODO")
    other = _added(translator, "frobnicate", {}, part_id=2).tool
    assert other.kind == OtherTool() and other.raw is not None and other.raw.name == "frobnicate"


def test_an_edit_carries_one_diff_per_hunk_from_the_engines_diff_view() -> None:
    """Issue: diffs from the engine's diff views: each hunk's old side (context and removed lines) and new side."""
    translator = Translator(SID, ROOT)
    _added(translator, "edit", {"path": "a.txt", "old_string": "b", "new_string": "B"})
    hunk = DiffHunk(old_start=1, old_lines=3, new_start=1, new_lines=3, lines=[" a", "-b", "+B", " c"])
    view = ViewDiff(files=[DiffFile(path="a.txt", hunks=[hunk])])
    state = ToolStateCompleted(output="edited a.txt", view=[view], duration_ms=3)
    changed = ToolStateChangedData(session_id=SID, message_id=4, part_id=0, state=state)
    (event,) = _map(translator, "tool.state_changed", changed)
    assert isinstance(event, d.AdapterEvent) and isinstance(event.kind, ToolUpdated)
    tool = event.kind.tool
    assert tool.kind == Edit() and tool.status is ToolStatus.COMPLETED and tool.output == "edited a.txt"
    assert tool.diffs == [FileDiff(path="/srv/project/a.txt", old_text="a\nb\nc\n", new_text="a\nB\nc\n")]


def test_run_outcomes_become_stop_reasons() -> None:
    """Issue: run.done completed → Completed/Protocol, canceled → Cancelled, failed → Failed(message); a refusal
    or content filter finish → Refused. Issue 33: the model's length limit and the run's max rounds completed at a
    limit (MaxTokens, MaxTurnRequests), not failed."""
    cases: list[tuple[RunOutcome, object]] = [
        (RunOutcomeTurn(finish="stop", rounds=1), Completed()),
        (RunOutcomeTurn(finish="length", rounds=1), Completed(limit=StopLimit.MAX_TOKENS)),
        (RunOutcomeTurn(finish="refusal", rounds=1), Refused()),
        (RunOutcomeTurn(finish="content_filter", rounds=1), Refused()),
        (RunOutcomeTurn(finish="canceled", rounds=1), Cancelled()),
        (RunOutcomeCanceled(), Cancelled()),
        (RunOutcomeFailed(code="max_rounds", message="out of rounds"), Completed(limit=StopLimit.MAX_TURN_REQUESTS)),
        (RunOutcomeFailed(code="network", message="the connection dropped"), None),
    ]
    for outcome, expected in cases:
        done = RunDoneData(
            session_id=SID, seq=1, run_id=1, kind="turn", timing=RunCanceledTiming(ended_at_ms=1), outcome=outcome
        )
        (event,) = _map(Translator(SID, ROOT), "run.done", done)
        assert isinstance(event, d.TurnStopped)
        if expected is None:
            assert event.stop == Failed(message="the connection dropped (network)")
        else:
            assert event.stop == expected


def test_a_committed_checkpoint_reports_context_compacted_and_the_run_just_ends() -> None:
    """`compact` is `ContextCompacted` … `TurnEnded`. The engine's checkpoint commit (manual, or auto
    inside a turn) is ContextCompacted plus the usage it leaves; the compaction run's end is only TurnStopped."""
    checkpoint = CompactionMessage(
        id=9,
        run_id=2,
        reason="auto",
        summary="s",
        first_kept_id=3,
        tokens_before=900,
        tokens_after=300,
        time=CreatedTime(created_at_ms=1),
    )
    translator = Translator(SID, ROOT)
    translator.window_tokens = 1000
    events = _map(translator, "message.committed", MessageCommittedData(session_id=SID, seq=4, message=checkpoint))
    assert events == [
        d.AdapterEvent(ContextCompacted()),
        d.AdapterEvent(ContextUsage(used_tokens=300, window_tokens=1000)),
    ]
    done = RunDoneData(
        session_id=SID,
        seq=5,
        run_id=2,
        kind="compaction",
        timing=RunCanceledTiming(ended_at_ms=1),
        outcome=RunOutcomeCompacted(message_id=9),
    )
    assert _map(translator, "run.done", done) == [d.TurnStopped(Completed())]


def test_request_ids_round_trip_to_the_engines_interaction_ids() -> None:
    """Request ids are adapter-minted and opaque; ours are `r<interaction id>`, anything else is
    not one of ours."""
    assert request_id(7) == "r7" and interaction_of("r7") == 7
    assert interaction_of("r") is None and interaction_of("x7") is None and interaction_of("r7x") is None


def test_a_spawn_call_runs_until_its_child_reports_even_when_the_report_beats_the_receipt() -> None:
    """A `spawn_agent` call is a Subagent tool: its receipt leaves it Running and the child's report settles it;
    a report that arrives first (a very fast child) settles it at the receipt."""
    outcome = RunOutcomeTurn(finish="stop", rounds=1)
    for report_first in (False, True):
        translator = Translator(SID, ROOT)
        assert _added(translator, "spawn_agent", {"name": "alpha", "task": "t"}).tool.kind == Subagent()
        if report_first:
            assert translator.agent_done(4, 0, outcome, "the report") == []
        receipt = ToolStateChangedData(
            session_id=SID, message_id=4, part_id=0, state=ToolStateCompleted(output="{}", duration_ms=1)
        )
        (event,) = _map(translator, "tool.state_changed", receipt)
        assert isinstance(event, d.AdapterEvent) and isinstance(event.kind, ToolUpdated)
        tool = event.kind.tool
        assert (tool.status, tool.title) == (
            ToolStatus.COMPLETED if report_first else ToolStatus.RUNNING,
            "Agent alpha",
        )
        if not report_first:
            (done,) = translator.agent_done(4, 0, outcome, "the report")
            assert isinstance(done, d.AdapterEvent) and isinstance(done.kind, ToolUpdated)
            tool = done.kind.tool
        assert (tool.status, tool.output) == (ToolStatus.COMPLETED, "the report")
        validate("ToolUpdate", tool.dump())


def test_a_stored_conversation_is_told_as_its_live_turns_showed_it_with_the_same_ids() -> None:
    """History (a resumed session's): a person's prompt as a UserMessage (a skill run as its command), an assistant
    message's reasoning and text whole and then MessageEnded (with its fork point), each tool call once with the
    snapshot the live mapping made of its final state, a plan call as its plan, a spawn settled by its child's
    report; the engine's own input (a child's report) and a compaction's summary are not shown."""
    hunk = DiffHunk(old_start=0, old_lines=0, new_start=1, new_lines=1, lines=["+hi"])
    written = ToolStateCompleted(
        output="wrote a.txt", view=[ViewDiff(files=[DiffFile(path="a.txt", hunks=[hunk])])], duration_ms=2
    )
    plan = {"entries": [{"content": "write it", "status": "completed", "priority": "high"}]}
    spawned = ToolStateCompleted(output="{}", duration_ms=1)
    stamp = CreatedTime(created_at_ms=1)
    report = ChildReport(
        session_id="1" * 32,
        run_id=1,
        path="alpha",
        outcome=RunOutcomeTurn(finish="stop", rounds=1),
        partial=False,
        truncated=False,
    )
    messages = [
        StoredPrompt(id=1, content=[ContentText(text="write a.txt")], input_id=1, time=stamp),
        AssistantMessage(
            id=2,
            run_id=1,
            config_rev=1,
            agent="root",
            time=MessageTime(created_at_ms=1),
            content=[
                ReasoningPart(id=0, text="I should write it.", signature="s"),
                TextPart(id=1, text="Writing."),
                ToolPart(id=2, name="write", arguments=json.dumps({"path": "a.txt", "content": "hi\n"}), state=written),
                ToolPart(
                    id=3, name="plan", arguments=json.dumps(plan), state=ToolStateCompleted(output="ok", duration_ms=1)
                ),
                ToolPart(id=4, name="plan", arguments="{}", state=ToolStateError(error="no entries", duration_ms=1)),
                ToolPart(id=5, name="spawn_agent", arguments=json.dumps({"name": "alpha", "task": "t"}), state=spawned),
            ],
        ),
        StoredPrompt(id=3, source=report, content=[ContentText(text="the report")], input_id=2, time=stamp),
        CompactionMessage(
            id=4, run_id=2, reason="manual", summary="all of it", tokens_before=9, tokens_after=3, time=stamp
        ),
        StoredPrompt(
            id=5,
            content=[ContentText(text="expanded")],
            input_id=3,
            skill=SkillRef(name="review", arguments="a.txt"),
            time=stamp,
        ),
    ]
    translator = Translator(SID, ROOT)
    told = translator.history(messages, {(2, 5): (RunOutcomeTurn(finish="stop", rounds=1), "the report")})
    kinds = [event.kind for event in told]
    assert all(event.parent_tool_id is None for event in told)
    assert [type(k).__name__ for k in kinds] == [
        "UserMessage",
        "ReasoningDelta",
        "TextDelta",
        "ToolUpdated",
        "PlanUpdated",
        "ToolUpdated",
        "MessageEnded",
        "UserMessage",
    ]
    assert kinds[0] == UserMessage(message_id="m1", text="write a.txt")
    assert kinds[1] == ReasoningDelta(message_id="m2", text="I should write it.")
    assert kinds[2] == TextDelta(message_id="m2", text="Writing.")
    assert kinds[6] == MessageEnded(message_id="m2") and told[6].extensions == {"omniagent/fork_point": "m2"}
    assert kinds[7] == UserMessage(message_id="m5", text="/review a.txt")
    # The write: the snapshot the live mapping makes of the same call in the same final state.
    live = Translator(SID, ROOT)
    _added_at(
        live,
        2,
        ToolPart(
            id=2, name="write", arguments=json.dumps({"path": "a.txt", "content": "hi\n"}), state=ToolStatePending()
        ),
    )
    (changed,) = _map(
        live, "tool.state_changed", ToolStateChangedData(session_id=SID, message_id=2, part_id=2, state=written)
    )
    assert isinstance(changed, d.AdapterEvent)
    assert kinds[3] == changed.kind
    assert (
        isinstance(kinds[3], ToolUpdated)
        and kinds[3].tool.id == "t2.2"
        and kinds[3].tool.status is ToolStatus.COMPLETED
    )
    assert kinds[4] == PlanUpdated(entries=[PlanEntry(text="write it", status=PlanStatus.COMPLETED)])
    spawn = kinds[5]
    assert isinstance(spawn, ToolUpdated) and spawn.tool.id == "t2.5"
    assert (spawn.tool.kind, spawn.tool.status, spawn.tool.output) == (Subagent(), ToolStatus.COMPLETED, "the report")
    # Without its child's report (the child is gone), a spawn shows as it was stored.
    alone = Translator(SID, ROOT).history(messages[1:2], {})
    (stored,) = [e.kind for e in alone if isinstance(e.kind, ToolUpdated) and e.kind.tool.id == "t2.5"]
    assert (stored.tool.status, stored.tool.output) == (ToolStatus.COMPLETED, "{}")


def _added_at(translator: Translator, message_id: int, part: ToolPart) -> None:
    added = MessagePartAddedData(session_id=SID, message_id=message_id, part=part)
    _map(translator, "message.part_added", added)

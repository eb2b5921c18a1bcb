"""The compaction rules as pure functions (docs/engine.md "Compaction"): where the cut falls, what a request projects,
and the projected context that triggers automatic compaction."""

from __future__ import annotations

import pytest

from omniagent.engine.run.compaction import rules as compaction_rules
from omniagent.protocols.yuke.content import ContentText
from omniagent.protocols.yuke.messages import (
    AssistantMessage,
    CompactionMessage,
    CreatedTime,
    Message,
    MessageTime,
    TextPart,
    TokenUsage,
    UserMessage,
)

# Each test runs on both stores: SQLite, and a fresh PostgreSQL database (conftest.py `each_store`).
pytestmark = pytest.mark.usefixtures("each_store")


WINDOW = 20_000  # keeps a tail of 2000 estimated tokens


def _user(mid: int, text: str) -> UserMessage:
    return UserMessage(id=mid, content=[ContentText(text=text)], input_id=mid, time=CreatedTime(created_at_ms=1))


def _assistant(mid: int, text: str, tokens: TokenUsage | None = None) -> AssistantMessage:
    return AssistantMessage(
        id=mid,
        run_id=mid,
        config_rev=0,
        agent="root",
        content=[TextPart(id=0, text=text)],
        tokens=tokens,
        time=MessageTime(created_at_ms=1),
    )


def _checkpoint(mid: int, first_kept_id: int, summary: str = "old summary") -> CompactionMessage:
    return CompactionMessage(
        id=mid,
        run_id=mid,
        reason="manual",
        summary=summary,
        first_kept_id=first_kept_id,
        tokens_before=100,
        tokens_after=50,
        time=CreatedTime(created_at_ms=1),
    )


def test_the_cut_is_the_oldest_of_the_consecutive_user_messages_of_the_turn_holding_the_tail() -> None:
    """Cut = start of the turn (oldest user message of its run of user messages) holding the tail target."""
    transcript: list[Message] = [
        _user(1, "a" * 4000),
        _assistant(2, "b"),
        _user(3, "queued one"),
        _user(4, "queued two"),
        _assistant(5, "c" * 8000),
    ]
    plan = compaction_rules.plan(transcript, WINDOW)
    assert isinstance(plan, compaction_rules.Plan)
    assert [m.id for m in plan.covered] == [1, 2] and plan.first_kept_id == 3 and plan.previous is None


def test_nothing_before_the_cut_or_no_message_at_all_is_a_skip() -> None:
    """Nothing earlier than the cut → too_few_messages; an empty range → nothing_to_summarize."""
    assert compaction_rules.plan([], WINDOW) == "nothing_to_summarize"
    assert compaction_rules.plan([_user(1, "hi"), _assistant(2, "hello")], WINDOW) == "too_few_messages"


def test_a_second_compaction_covers_the_kept_messages_and_merges_the_previous_summary() -> None:
    """Requests project the newest checkpoint + messages from first_kept_id; the next compaction covers
    only those and wraps the previous checkpoint in <previous-summary>."""
    transcript: list[Message] = [
        _user(1, "old"),
        _assistant(2, "old answer"),
        _user(3, "x" * 4000),
        _assistant(4, "kept answer"),
        _checkpoint(5, first_kept_id=3),
        _user(6, "y" * 9000),
        _assistant(7, "newest"),
    ]
    checkpoint, kept = compaction_rules.project(transcript)
    assert checkpoint is not None and checkpoint.id == 5 and [m.id for m in kept] == [3, 4, 6, 7]
    plan = compaction_rules.plan(transcript, WINDOW)
    assert isinstance(plan, compaction_rules.Plan)
    assert plan.previous == checkpoint and [m.id for m in plan.covered] == [3, 4] and plan.first_kept_id == 6
    prompt = compaction_rules.instruction(plan.previous)
    assert "<previous-summary>\nold summary\n</previous-summary>" in prompt and "## Next steps" in prompt


def test_the_projected_context_uses_the_last_call_after_the_newest_checkpoint_only() -> None:
    """The trigger (pi's rule): the last assistant usage plus what came after; usage from before the newest
    checkpoint is stale, so then everything is estimated (with the system prompt and tools)."""
    used = TokenUsage(input=15_000, output=500)
    transcript: list[Message] = [_user(1, "q"), _assistant(2, "a", used), _user(3, "z" * 400)]
    assert compaction_rules.context_tokens(transcript, frame_tokens=800) == 15_500 + 100
    assert compaction_rules.needs_compaction(15_600, WINDOW, 5_000) and not compaction_rules.needs_compaction(
        15_600, None, 0
    )
    compacted = [*transcript, _checkpoint(4, first_kept_id=3)]
    expected = 800 + compaction_rules.estimate_message(compacted[-1]) + 100
    assert compaction_rules.context_tokens(compacted, frame_tokens=800) == expected

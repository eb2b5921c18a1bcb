"""Requests: lifetimes, answer validation (the request stays open on a bad answer), AutoApprove."""

from typing import Any

import pytest

from omniagent.protocols.sidecar.commands import (
    Answer,
    ChoicesAnswer,
    PermissionAnswer,
    PermissionMode,
    QuestionsAnswer,
    TextAnswer,
)
from omniagent.protocols.sidecar.events import PermissionChoice, RequestClosed, RequestOpened, TextDelta
from omniagent.runtime.errors import InvalidRequest
from tests.runtime.conformance.harness import (
    END,
    collect,
    is_kind,
    mock_session,
    one_turn,
    permission,
    question,
    tags,
    text,
    without_status,
)

ALLOW = PermissionAnswer(choice=PermissionChoice.ALLOW_ONCE)


async def _rejects(session: Any, request_id: str, answer: Answer, detail: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        await session.answer(request_id, answer)
    assert caught.value.detail == detail


async def test_answering_a_permission_closes_it_before_the_reply_and_the_turn_goes_on() -> None:
    """Valid answer → RequestClosed, then the rest of the turn."""
    async with mock_session({"turns": [[permission("r1"), "AwaitAnswer", text("Done."), END]]}) as (_, session):
        await session.prompt("go")
        opened = await collect(session, is_kind(RequestOpened))
        assert opened[-1].session_id == session.id
        await session.answer("r1", ALLOW)
        rest = without_status(await one_turn(session))
        assert isinstance(rest[0].kind, RequestClosed) and rest[0].kind.request_id == "r1"
        assert [e.kind.text for e in rest if isinstance(e.kind, TextDelta)] == ["Done."]


async def test_unknown_and_already_answered_requests_are_invalid() -> None:
    """Unknown id and a second answer → InvalidRequest "request R is not open"."""
    async with mock_session({"turns": [[permission("r1"), "AwaitAnswer", "AwaitAnswer", END]]}) as (_, session):
        await session.prompt("go")
        await collect(session, is_kind(RequestOpened))
        await _rejects(session, "nope", ALLOW, "request nope is not open")
        await session.answer("r1", ALLOW)
        await _rejects(session, "r1", ALLOW, "request r1 is not open")


async def test_a_choice_that_was_not_offered_is_rejected_and_the_request_stays_open() -> None:
    """Validation happens before the wire; a rejected answer leaves the request open."""
    async with mock_session({"turns": [[permission("r1"), "AwaitAnswer", END]]}) as (_, session):
        await session.prompt("go")
        await collect(session, is_kind(RequestOpened))
        await _rejects(
            session, "r1", PermissionAnswer(choice=PermissionChoice.ALLOW_ALWAYS), "choice AllowAlways was not offered"
        )
        await _rejects(session, "r1", QuestionsAnswer(answers=[]), "answer type does not match the request")
        assert session.info().status == "NeedsInput"
        await session.answer("r1", ALLOW)
        assert tags(without_status(await one_turn(session)))[0] == "RequestClosed"


@pytest.mark.parametrize(
    ("fields", "answer", "detail"),
    [
        ({}, [TextAnswer(text="free")], "question q0 does not allow free text"),
        ({}, [ChoicesAnswer(ids=[])], "no choice given"),
        ({}, [ChoicesAnswer(ids=["a", "b"])], "question q0 allows one choice"),
        ({}, [ChoicesAnswer(ids=["zzz"])], "choice zzz is not a choice of question q0"),
    ],
)
async def test_question_answers_must_fit_their_questions(
    fields: dict[str, Any], answer: list[Any], detail: str
) -> None:
    """Count, free text only if allowed, non-empty choices, one unless multi-select, valid ids."""
    async with mock_session({"turns": [[question("q", **fields), "AwaitAnswer", END]]}) as (_, session):
        await session.prompt("go")
        await collect(session, is_kind(RequestOpened))
        await _rejects(session, "q", QuestionsAnswer(answers=answer), detail)
        await session.answer("q", QuestionsAnswer(answers=[ChoicesAnswer(ids=["a"])]))


async def test_no_answers_at_all_decline_the_questions() -> None:
    """An answer with no answers declines the request (the user dismissed it, or no client can show it): it closes
    and the turn goes on."""
    async with mock_session({"turns": [[question("q"), "AwaitAnswer", END]]}) as (_, session):
        await session.prompt("go")
        await collect(session, is_kind(RequestOpened))
        await session.answer("q", QuestionsAnswer(answers=[]))
        assert tags(without_status(await one_turn(session)))[0] == "RequestClosed"


async def test_multi_select_and_free_text_questions_accept_their_answers() -> None:
    """Several choices with multi_select; Text with allows_free_text."""
    multi = question("q1", multi_select=True)
    free = question("q2", allows_free_text=True)
    async with mock_session({"turns": [[multi, "AwaitAnswer", free, "AwaitAnswer", END]]}) as (_, session):
        await session.prompt("go")
        await collect(session, is_kind(RequestOpened))
        await session.answer("q1", QuestionsAnswer(answers=[ChoicesAnswer(ids=["a", "b"])]))
        await collect(session, is_kind(RequestOpened))
        await session.answer("q2", QuestionsAnswer(answers=[TextAnswer(text="mine")]))
        assert tags(without_status(await one_turn(session)))[-1] == "TurnEnded"


async def test_auto_approve_answers_permissions_itself_and_the_caller_sees_neither_side() -> None:
    """AutoApprove → no RequestOpened / RequestClosed; the turn completes."""
    script = {"turns": [[permission("r1"), "AwaitAnswer", text("Done."), END]]}
    async with mock_session(script, permission_mode=PermissionMode.AUTO_APPROVE) as (_, session):
        await session.prompt("go")
        events = await one_turn(session)
        assert "RequestOpened" not in tags(events) and "RequestClosed" not in tags(events)
        assert [e.kind.text for e in events if isinstance(e.kind, TextDelta)] == ["Done."]


async def test_auto_approve_still_forwards_questions() -> None:
    """AutoApprove answers permissions only."""
    async with mock_session({"turns": [[question("q"), "AwaitAnswer", END]]}, permission_mode="AutoApprove") as (_, s):
        await s.prompt("go")
        await collect(s, is_kind(RequestOpened))
        await s.answer("q", QuestionsAnswer(answers=[ChoicesAnswer(ids=["b"])]))
        assert tags(without_status(await one_turn(s)))[:1] == ["RequestClosed"]

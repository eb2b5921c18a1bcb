"""The ACP adapter's turns through `Runtime` + `Session` against the fake ACP agent subprocess, v1 and v2: text,
thoughts, tool snapshots, permissions, cancel, agent death and stop reasons (docs/agents.md "ACP agents")."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniagent.protocols.sidecar.commands import PermissionAnswer, Started, Steered
from omniagent.protocols.sidecar.events import (
    Cancelled,
    CommandInput,
    Completed,
    CompletionSource,
    DiagnosticEvent,
    Execute,
    Failed,
    MessageEnded,
    PermissionAsk,
    PermissionChoice,
    ReasoningDelta,
    Refused,
    RequestClosed,
    RequestOpened,
    StopLimit,
    TextDelta,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
    TurnStarted,
)
from omniagent.runtime.errors import AuthRequired, ProcessExited
from tests.runtime.adapters.acp.harness import acp_session, collect, is_kind, of, one_turn, texts

VERSIONS = pytest.mark.parametrize("version", [1, 2])


@VERSIONS
async def test_a_plain_prompt_streams_the_agents_text_and_completes_by_protocol(tmp_path: Path, version: int) -> None:
    """agent_message_chunk → TextDelta; the prompt's end (v1 answer, v2 idle) → Completed/Protocol;
    ACP has no end-of-message frame, so the loop ends the message."""
    async with acp_session(tmp_path, version) as (_, session):
        delivery = await session.prompt("hello")
        assert isinstance(delivery.kind, Started)
        events = await one_turn(session)
    assert [(d.message_id, d.text) for d in of(events, TextDelta)] == [("a1", "Hel"), ("a1", "lo")]
    assert [m.message_id for m in of(events, MessageEnded)] == ["a1"]
    assert of(events, TurnEnded)[0].stop == Completed(source=CompletionSource.PROTOCOL)
    assert not [e for e in events if isinstance(e.kind, TextDelta) and e.turn_info is None]


@VERSIONS
async def test_thoughts_become_reasoning_deltas_before_the_text(tmp_path: Path, version: int) -> None:
    """agent_thought_chunk → ReasoningDelta."""
    async with acp_session(tmp_path, version) as (_, session):
        await session.prompt("think")
        events = await one_turn(session)
    kinds = [e.kind for e in events if isinstance(e.kind, ReasoningDelta | TextDelta)]
    assert [(type(k).__name__, k.text) for k in kinds] == [("ReasoningDelta", "pondering"), ("TextDelta", "done")]


@VERSIONS
async def test_a_tool_call_is_a_cumulative_snapshot_with_output_deltas_and_diffs(tmp_path: Path, version: int) -> None:
    """tool_call → fresh snapshot; each update merges into it, newly appended text comes first as
    ToolOutputDelta, then the whole ToolUpdated; diff content → diffs; rawInput → raw."""
    async with acp_session(tmp_path, version) as (_, session):
        await session.prompt("tool")
        events = await one_turn(session)
    tools = [e.kind for e in events if isinstance(e.kind, ToolUpdated | ToolOutputDelta)]
    deltas = [k.text for k in tools if isinstance(k, ToolOutputDelta)]
    assert deltas == ["a.txt\n", "b.txt\n"] if version == 2 else ["a.txt\n", "b.txt\n"]
    for index, kind in enumerate(tools):
        if isinstance(kind, ToolOutputDelta):  # the delta always precedes the snapshot that contains it
            after = tools[index + 1]
            assert isinstance(after, ToolUpdated) and (after.tool.output or "").endswith(kind.text)
    snapshots = [k.tool for k in tools if isinstance(k, ToolUpdated)]
    assert snapshots[0].status is ToolStatus.PENDING and snapshots[0].output is None
    assert ToolStatus.RUNNING in [s.status for s in snapshots]
    final = snapshots[-1]
    assert final.id == "c1" and final.title == "Run ls" and isinstance(final.kind, Execute)
    assert final.status is ToolStatus.COMPLETED
    assert final.output == "a.txt\nb.txt\n"
    assert isinstance(final.input, CommandInput) and final.input.spec.command == "ls"
    assert final.raw is not None and final.raw.input == {"command": "ls"}
    assert [diff.path for diff in final.diffs] == ["/w/x.py"]
    if version == 1:
        assert (final.diffs[0].old_text, final.diffs[0].new_text) == ("old", "new")
    else:
        assert "+new" in final.diffs[0].new_text
    assert of(events, TurnEnded)[0].background == []


@VERSIONS
@pytest.mark.parametrize(
    ("choice", "option"), [(PermissionChoice.ALLOW_ONCE, "allow"), (PermissionChoice.DENY_ONCE, "deny")]
)
async def test_a_permission_request_round_trips_the_callers_choice(
    tmp_path: Path, version: int, choice: PermissionChoice, option: str
) -> None:
    """Request id `r` + JSON of the wire id (real agents start at 0); option kinds map to
    choices; the answer picks the option of that kind → `{"outcome":"selected","optionId":…}`."""
    async with acp_session(tmp_path, version) as (_, session):
        await session.prompt("permission")
        opened = of(await collect(session, is_kind(RequestOpened)), RequestOpened)[-1]
        assert isinstance(opened.request, PermissionAsk)
        request = opened.request.request
        assert request.id == "r0"
        assert request.options == [PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE]
        assert request.detail is None
        assert request.tool.title == ("touch x" if version == 1 else "Run touch x?")
        assert request.tool.status is ToolStatus.PENDING
        await session.answer(request.id, PermissionAnswer(choice=choice))
        events = await one_turn(session)
    assert [c.request_id for c in of(events, RequestClosed)] == ["r0"]
    assert f'"optionId": "{option}"' in texts(events)
    assert of(events, TurnEnded)[0].stop == Completed()


@VERSIONS
async def test_auto_approve_answers_permissions_without_showing_them(tmp_path: Path, version: int) -> None:
    """AutoApprove answers AllowOnce itself and emits neither RequestOpened nor RequestClosed."""
    from omniagent.protocols.sidecar.commands import PermissionMode

    async with acp_session(tmp_path, version, permission_mode=PermissionMode.AUTO_APPROVE) as (_, session):
        await session.prompt("permission")
        events = await one_turn(session)
    assert not of(events, RequestOpened)
    assert '"optionId": "allow"' in texts(events)


@VERSIONS
async def test_cancel_mid_turn_ends_it_cancelled_and_the_next_prompt_runs(tmp_path: Path, version: int) -> None:
    """Cancel → `session/cancel`; the agent's `cancelled` → TurnEnded Cancelled; the session
    lives on."""
    async with acp_session(tmp_path, version) as (_, session):
        await session.prompt("wait")
        await collect(session, is_kind(TextDelta))
        await session.cancel()
        assert of(await one_turn(session), TurnEnded)[0].stop == Cancelled()
        await session.prompt("hello")
        events = await one_turn(session)
    assert texts(events) == "Hello"
    assert of(events, TurnEnded)[0].stop == Completed()


@VERSIONS
async def test_cancel_answers_a_pending_permission_cancelled(tmp_path: Path, version: int) -> None:
    """ACP cancellation: pending permission requests are answered `cancelled`; the loop closes the request first."""
    async with acp_session(tmp_path, version) as (_, session):
        await session.prompt("permission-wait")
        await collect(session, is_kind(RequestOpened))
        await session.cancel()
        events = await one_turn(session)
    assert [c.request_id for c in of(events, RequestClosed)] == ["r0"]
    assert '"outcome": "cancelled"' in texts(events)
    assert of(events, TurnEnded)[0].stop == Cancelled()


@VERSIONS
async def test_an_agent_dying_mid_turn_fails_the_turn_and_closes_the_session(tmp_path: Path, version: int) -> None:
    """The process exiting → Exited(status, stderr tail) once → TurnEnded Failed, the stream
    raises ProcessExited, the session is closed."""
    async with acp_session(tmp_path, version) as (_, session):
        await session.prompt("exit")
        events = await one_turn(session)
        assert texts(events) == "bye"
        stop = of(events, TurnEnded)[0].stop
        assert isinstance(stop, Failed)
        with pytest.raises(ProcessExited) as caught:
            await collect(session, lambda _: False)
        await session.wait_closed()
        assert session.closed
    assert caught.value.status == "exit status: 5"
    assert caught.value.stderr == "fake agent: fatal"


@VERSIONS
@pytest.mark.parametrize(
    ("prompt", "stop"),
    [
        ("refuse", Refused()),
        ("max", Completed(limit=StopLimit.MAX_TOKENS)),
        ("turns", Completed(limit=StopLimit.MAX_TURN_REQUESTS)),
        ("odd", Failed(message="turn stopped: odd")),
    ],
)
async def test_stop_reasons_map_refusal_limits_and_others(
    tmp_path: Path, version: int, prompt: str, stop: object
) -> None:
    """Refusal → Refused; max_tokens / max_turn_requests → Completed at that limit (issue 33); a reason no version
    names → Failed("turn stopped: X")."""
    async with acp_session(tmp_path, version) as (_, session):
        await session.prompt(prompt)
        assert of(await one_turn(session), TurnEnded)[0].stop == stop


@VERSIONS
async def test_a_steering_agent_takes_a_second_prompt_into_the_running_turn(tmp_path: Path, version: int) -> None:
    """Steer only when `_meta.steering.supported`; `_session/steering` → `{accepted}`."""
    async with acp_session(tmp_path, version, "--steering") as (_, session):
        await session.prompt("wait")
        await collect(session, is_kind(TextDelta))
        delivery = await session.prompt("more please")
        assert isinstance(delivery.kind, Steered)
        more = of(await collect(session, is_kind(TextDelta)), TextDelta)
        assert more[-1].text.endswith("more please")
        await session.cancel()
        events = await one_turn(session)
    assert len(of(events, TurnEnded)) == 1 and not of(events, TurnStarted)


async def test_attachments_are_named_in_the_prompt_text(tmp_path: Path) -> None:
    """Every attachment path is referenced in the text; nothing inline unless advertised."""
    picture = tmp_path / "shot.png"
    picture.write_bytes(b"\x89PNG fake")
    async with acp_session(tmp_path, 1) as (_, session):
        await session.prompt("echo", [str(picture)])
        said = texts(await one_turn(session))
    assert '"types": ["text"]' in said
    assert f"- {picture}" in said


@VERSIONS
async def test_a_prompt_failing_with_auth_required_ends_the_session_needing_login(tmp_path: Path, version: int) -> None:
    """A prompt answered -32000 → AuthLost → the turn fails and the stream raises AuthRequired."""
    async with acp_session(tmp_path, version) as (_, session):
        await session.prompt("logout")
        events = await one_turn(session)
        assert isinstance(of(events, TurnEnded)[0].stop, Failed)
        with pytest.raises(AuthRequired):
            await collect(session, lambda _: False)
        await session.wait_closed()


@VERSIONS
async def test_an_error_answer_to_a_prompt_fails_the_turn_with_message_and_code(tmp_path: Path, version: int) -> None:
    """An error response → Failed("msg (code)"); the session lives on."""
    async with acp_session(tmp_path, version) as (_, session):
        await session.prompt("hello")
        await one_turn(session)
        await session.prompt("fail")
        assert of(await one_turn(session), TurnEnded)[0].stop == Failed(message="internal boom (-32603)")
        await session.prompt("hello")
        assert texts(await one_turn(session)) == "Hello"


@VERSIONS
async def test_a_cancel_right_after_the_prompt_reaches_the_agent_after_it(tmp_path: Path, version: int) -> None:
    """ACP cancellation: `session/cancel` must follow its `session/prompt` on the wire, or the agent never ends the
    turn and the loop has to (with a warning)."""
    async with acp_session(tmp_path, version) as (_, session):
        await session.prompt("wait")
        await session.cancel()
        events = await one_turn(session)
    assert of(events, TurnEnded)[0].stop == Cancelled()
    assert not of(events, DiagnosticEvent)

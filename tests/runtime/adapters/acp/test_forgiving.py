"""The ACP adapter forgives what real agents do, through `Runtime` + `Session` against the quirky fixture agent (a
real subprocess speaking ACP v1 over stdio): configure answered `{}`, notifications nobody maps, requests nobody
answers (docs/agents.md "ACP agents")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omniagent.protocols.sidecar.base import DiagnosticLevel
from omniagent.protocols.sidecar.events import Completed, DiagnosticEvent, Event, SessionUpdated, TurnEnded
from tests.runtime.adapters.acp.harness import (
    agent_session,
    collect,
    is_kind,
    of,
    one_turn,
    quirky_agent,
    texts,
)

# (option, value, flags): an option each way ACP sets one — a config option, a v1 mode, a first-class model.
SETTERS = pytest.mark.parametrize(
    ("option", "value", "flags"),
    [("model", "smart", ("--options",)), ("mode", "plan", ("--options",)), ("model", "opus", ("--models",))],
    ids=["set_config_option", "set_mode", "set_model"],
)


def current(event: Event, option: str) -> object:
    assert isinstance(event.kind, SessionUpdated)
    info = event.kind.info
    listed = next(o.current for o in info.details.config_options if o.id == option)
    assert info.configuration.options[option] == listed
    return listed


@SETTERS
async def test_a_live_configure_answered_empty_is_confirmed_and_the_session_stays_usable(
    tmp_path: Path, option: str, value: str, flags: tuple[str, ...]
) -> None:
    """An agent that takes a value and answers `{}` (no `configOptions`) has applied it: SessionUpdated carries
    the new value, no diagnostic, and the next prompt runs a whole turn."""
    async with agent_session(quirky_agent("--empty-answers", *flags), tmp_path) as session:
        await session.configure(option, value)
        events = await collect(session, is_kind(SessionUpdated))
        assert current(events[-1], option) == value
        assert not of(events, DiagnosticEvent)
        await session.prompt("hello")
        turn = await one_turn(session)
    assert texts(turn) == "Hello"
    assert turn[-1].kind == TurnEnded(stop=Completed())


@SETTERS
async def test_a_creation_time_option_answered_empty_is_taken_as_applied(
    tmp_path: Path, option: str, value: str, flags: tuple[str, ...]
) -> None:
    """At open, an option the agent answers with `{}` counts as applied: the session opens with that value."""
    agent = quirky_agent("--empty-answers", *flags)
    async with agent_session(agent, tmp_path, configure={option: value}) as session:
        info = session.info()
        assert info.configuration.options[option] == value
        await session.prompt("hello")
        assert (await one_turn(session))[-1].kind == TurnEnded(stop=Completed())


async def test_a_notification_nobody_maps_is_an_info_diagnostic_carrying_it(tmp_path: Path) -> None:
    """Every other notification → Info Diagnostic, the method as the extension key."""
    async with agent_session(quirky_agent(), tmp_path) as session:
        await session.prompt("ratelimit")
        turn = await one_turn(session)
    (event,) = [event for event in turn if isinstance(event.kind, DiagnosticEvent)]
    assert isinstance(event.kind, DiagnosticEvent)
    assert event.kind.diagnostic.level is DiagnosticLevel.INFO
    assert event.kind.diagnostic.message == "unhandled ACP notification `_claude/rateLimit`"
    assert event.extensions == {"_claude/rateLimit": {"sessionId": "s1", "resetsIn": 60}}
    assert turn[-1].kind == TurnEnded(stop=Completed())


async def test_a_request_nobody_answers_is_method_not_found_and_a_warning(tmp_path: Path) -> None:
    """Other agent→client requests → -32601 to the agent, a Warning to the caller; the turn goes
    on."""
    async with agent_session(quirky_agent(), tmp_path) as session:
        await session.prompt("unknown-request")
        turn = await one_turn(session)
    (warning,) = [d.diagnostic for d in of(turn, DiagnosticEvent)]
    assert warning.level is DiagnosticLevel.WARNING
    assert warning.message == "the agent sent the request `_fake/unknown`, which the ACP adapter does not answer"
    assert json.loads(texts(turn)) == -32601
    assert turn[-1].kind == TurnEnded(stop=Completed())

"""Configure / rollback / compact validation, session ids, `generate`, and opening errors."""

import pytest

from omniagent.protocols.sidecar.base import convert
from omniagent.protocols.sidecar.commands import RollbackScope
from omniagent.protocols.sidecar.events import ContextCompacted, FromAgent, SessionUpdated, TurnEnded, TurnStarted
from omniagent.runtime.adapters.mock import MockScript, load_script
from omniagent.runtime.errors import (
    InvalidConfiguration,
    NotInstalled,
    ProtocolFailed,
    SessionBusy,
    UnsupportedFeature,
)
from omniagent.runtime.runtime import Runtime
from tests.runtime.conformance.harness import END, TIMING, collect, is_kind, mock_session, one_turn, tags, text

CONFIGURE = load_script("configure").dump()


async def test_live_configure_is_confirmed_by_session_updated() -> None:
    """Configure → ok, then SessionUpdated with options and config_options[].current."""
    async with mock_session(CONFIGURE) as (_, session):
        await session.configure("model", "opus")
        updated = await collect(session, is_kind(SessionUpdated))
        info = updated[-1].kind.info
        assert info.configuration.options["model"] == "opus"
        assert info.details.config_options[0].current == "opus"
        assert session.info().configuration.options["model"] == "opus"


@pytest.mark.parametrize(
    ("option", "value", "detail"),
    [
        ("nope", "x", "unknown option `nope`"),
        ("model", "gpt", "`gpt` is not a choice of `model`"),
        ("model", True, "wrong value type"),
    ],
)
async def test_configure_is_validated_before_the_wire(option: str, value: str | bool, detail: str) -> None:
    """The option must exist and be live; the value must fit its kind."""
    async with mock_session(CONFIGURE) as (_, session):
        with pytest.raises(InvalidConfiguration) as caught:
            await session.configure(option, value)
        assert caught.value.detail == detail


async def test_creation_options_are_checked_and_applied_at_open() -> None:
    """`configure` at open = creation-time options; a refusal is InvalidConfiguration."""
    async with Runtime(mock=convert(CONFIGURE, MockScript), timing=TIMING) as runtime:
        session = await runtime.open("mock", ".", configure={"model": "opus"})
        assert session.info().configuration.options == {"model": "opus"}
        with pytest.raises(InvalidConfiguration):
            await runtime.open("mock", ".", configure={"model": "gpt"})


async def test_rollback_needs_the_capability_and_compact_runs_as_an_agent_turn() -> None:
    """Rollback → UnsupportedFeature without the capability; compact → an Agent turn."""
    async with mock_session({"compact": True, "turns": [["AwaitAnswer"]]}) as (_, session):
        with pytest.raises(UnsupportedFeature):
            await session.rollback(1, RollbackScope.CONVERSATION)
        await session.compact()
        events = await one_turn(session)
        assert events[0].kind == TurnStarted(origin=FromAgent())
        assert any(isinstance(e.kind, ContextCompacted) for e in events)
        assert isinstance(events[-1].kind, TurnEnded)
        await session.prompt("busy now")
        with pytest.raises(SessionBusy):
            await session.compact()


async def test_compact_without_the_capability_is_unsupported() -> None:
    """Compact needs capability Compact."""
    async with mock_session({"turns": []}) as (_, session):
        with pytest.raises(UnsupportedFeature):
            await session.compact()


async def test_session_ids_are_process_global_and_turn_ids_per_session() -> None:
    """Sessions s1, s2…; each session counts its own t1 and p1."""
    async with Runtime(mock=convert({"turns": [[END]]}, MockScript), timing=TIMING) as runtime:
        first = await runtime.open("mock", ".")
        second = await runtime.open("mock", ".")
        assert (first.id, second.id) == ("s1", "s2")
        assert (await second.prompt("x")).kind.turn_id == "t1"  # type: ignore[union-attr]


async def test_generate_returns_the_turns_text() -> None:
    """A new session, one prompt, the top-level text until TurnEnded Completed."""
    script = {"turns": [[text("A short "), text("title"), END]]}
    async with Runtime(mock=convert(script, MockScript), timing=TIMING) as runtime:
        assert await runtime.generate("mock", ".", "name this") == "A short title"


async def test_generate_declines_permissions_and_fails_when_the_agent_uses_a_tool() -> None:
    """RequestOpened is declined (DenyOnce); any ToolUpdated → ProtocolFailed."""
    tool_use = {"Emit": {"ToolUpdated": {"id": "t", "kind": "Read", "title": "read", "status": "Running"}}}
    async with Runtime(mock=convert({"turns": [[tool_use, END]]}, MockScript), timing=TIMING) as runtime:
        with pytest.raises(ProtocolFailed) as caught:
            await runtime.generate("mock", ".", "x")
        assert caught.value.detail == "generate: the agent attempted to use a tool"
        with pytest.raises(InvalidConfiguration):
            await runtime.generate("mock", ".", "x", resume="abc")


async def test_generate_reports_a_turn_that_did_not_complete() -> None:
    """Another stop → ProtocolFailed "generate: turn ended with …"."""
    script = {"turns": [[text("no"), {"End": "Refused"}]]}
    async with Runtime(mock=convert(script, MockScript), timing=TIMING) as runtime:
        with pytest.raises(ProtocolFailed) as caught:
            await runtime.generate("mock", ".", "x")
        assert caught.value.detail == "generate: turn ended with Refused"


async def test_unknown_agents_are_not_installed_and_catalog_agents_without_an_adapter_fail_clearly() -> None:
    """NotInstalled{agent}; a catalog agent whose wire has no adapter → ProtocolFailed."""
    async with Runtime(mock=convert({}, MockScript), timing=TIMING) as runtime:
        with pytest.raises(NotInstalled) as caught:
            await runtime.open("nope", ".")
        assert caught.value.body().dump()["agent"] == "nope"
        assert tags([]) == []

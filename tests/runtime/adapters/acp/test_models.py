"""First-class model selection over ACP through `Runtime` + `Session` against the fake ACP agent subprocess: v1's
unstable `models` object becomes the live option `model`, switched with `session/set_model` (docs/agents.md
"ACP agents"; claude-code-acp, Gemini CLI and Qwen Code answer `session/new` with it)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.sidecar.agents import ConfigChoice, SelectKind
from omniagent.protocols.sidecar.base import DiagnosticLevel
from omniagent.protocols.sidecar.events import DiagnosticEvent, SessionUpdated
from omniagent.runtime.errors import InvalidConfiguration
from omniagent.runtime.runtime import Runtime
from tests.runtime.adapters.acp.harness import TIMING, WAIT, acp_session, collect, fake_agent, is_kind, of
from tests.sidecar_schema import validate


def sent(log: Path, method: str) -> list[dict[str, Any]]:
    """The params of every `method` request the fake agent read, in order."""
    messages = [json.loads(line) for line in log.read_text().splitlines()]
    return [message["params"] for message in messages if message.get("method") == method]


async def test_first_class_models_are_the_live_model_option(tmp_path: Path) -> None:
    """First-class `models{currentModelId, availableModels}` → option `model` (live, category
    model), one choice per `modelId` labelled by its `name` and keeping its `description`, current from
    `currentModelId`."""
    async with acp_session(tmp_path, 1, "--models") as (_, session):
        info = session.info()
    model = next(option for option in info.details.config_options if option.id == "model")
    assert (model.category, model.current, model.live) == ("model", "default", True)
    assert isinstance(model.kind, SelectKind)
    assert model.kind.choices[:2] == [
        ConfigChoice(value="default", label="Default (recommended)"),
        ConfigChoice(value="opus", label="Opus", description="the big one"),
    ]
    assert info.configuration.options["model"] == "default"


async def test_setting_the_model_sends_set_model_and_confirms_with_session_updated(tmp_path: Path) -> None:
    """Setting the first-class `model` → `session/set_model{sessionId, modelId}`; the accepted
    switch is confirmed by SessionUpdated carrying the new value, in the configuration and in the option."""
    log = tmp_path / "wire.jsonl"
    async with acp_session(tmp_path, 1, "--models", "--log", str(log)) as (_, session):
        await session.configure("model", "opus")
        updated = of(await collect(session, is_kind(SessionUpdated)), SessionUpdated)[-1]
    assert sent(log, "session/set_model") == [{"sessionId": "s1", "modelId": "opus"}]
    assert not sent(log, "session/set_config_option")
    assert updated.info.configuration.options["model"] == "opus"
    model = next(option for option in updated.info.details.config_options if option.id == "model")
    assert model.current == "opus"


async def test_a_model_the_agent_did_not_offer_is_invalid_configuration_before_the_wire(tmp_path: Path) -> None:
    """A select value that is not a choice → InvalidConfiguration, and nothing reaches the agent
    (the valid switch sent after it is the only `session/set_model` the agent reads)."""
    log = tmp_path / "wire.jsonl"
    async with acp_session(tmp_path, 1, "--models", "--log", str(log)) as (_, session):
        with pytest.raises(InvalidConfiguration) as caught:
            await session.configure("model", "gpt-9")
        assert caught.value.detail == "`gpt-9` is not a choice of `model`"
        await session.configure("model", "haiku")
        await collect(session, is_kind(SessionUpdated))
    assert sent(log, "session/set_model") == [{"sessionId": "s1", "modelId": "haiku"}]


async def test_an_agent_refusing_a_model_switch_is_a_warning_and_the_model_stays(tmp_path: Path) -> None:
    """A live refusal = Warning Diagnostic "agent rejected configure `model`: …"; the value stays."""
    async with acp_session(tmp_path, 1, "--models") as (_, session):
        await session.configure("model", "broken")
        warning = of(await collect(session, is_kind(DiagnosticEvent)), DiagnosticEvent)[-1].diagnostic
        assert warning.level is DiagnosticLevel.WARNING
        assert warning.message == "agent rejected configure `model`: cannot switch to broken"
        assert session.info().configuration.options["model"] == "default"


async def test_a_creation_time_model_is_applied_and_a_refusal_is_invalid_configuration(tmp_path: Path) -> None:
    """Creation-time `model` → `session/set_model` right after `session/new`; a refusal →
    InvalidConfiguration("agent rejected `model`: msg")."""
    log = tmp_path / "wire.jsonl"
    async with acp_session(tmp_path, 1, "--models", "--log", str(log), configure={"model": "haiku"}) as (runtime, s):
        assert s.info().configuration.options["model"] == "haiku"
        with pytest.raises(InvalidConfiguration) as caught:
            await runtime.open(fake_agent(1, "--models"), tmp_path, configure={"model": "broken"})
    validate("ErrorBody", caught.value.body().dump())
    assert caught.value.detail == "agent rejected `model`: cannot switch to broken"
    methods = [json.loads(line).get("method") for line in log.read_text().splitlines()]
    assert methods[methods.index("session/new") + 1] == "session/set_model"
    assert sent(log, "session/set_model") == [{"sessionId": "s1", "modelId": "haiku"}]


async def test_a_model_config_option_wins_over_first_class_models(tmp_path: Path) -> None:
    """Our rule (docs/agents.md): when the agent also offers a configOption with category model (Qwen Code sends
    both), that option is the only `model`, set with `session/set_config_option`; `session/set_model` is unused."""
    log = tmp_path / "wire.jsonl"
    async with acp_session(tmp_path, 1, "--options", "--models", "--log", str(log)) as (_, session):
        models = [option for option in session.info().details.config_options if option.category == "model"]
        assert [(option.id, option.current) for option in models] == [("model", "fast")]
        await session.configure("model", "smart")
        updated = of(await collect(session, is_kind(SessionUpdated)), SessionUpdated)[-1]
    assert updated.info.configuration.options["model"] == "smart"
    assert sent(log, "session/set_config_option")[0]["configId"] == "model"
    assert not sent(log, "session/set_model")


async def test_a_resumed_session_reads_the_models_of_its_load_answer(tmp_path: Path) -> None:
    """`session/load` answers with `models` too; the option follows it."""
    async with acp_session(tmp_path, 1, "--models", resume="s9") as (_, session):
        assert session.info().configuration.options["model"] == "default"
        await session.configure("model", "opus")
        updated = of(await collect(session, is_kind(SessionUpdated)), SessionUpdated)[-1]
    assert updated.info.configuration.options["model"] == "opus"


async def test_a_v2_agent_gets_no_first_class_model_option(tmp_path: Path) -> None:
    """ACP v2 has no `session/set_model` (nor `models`), so a v2 answer's `models` is not offered as an option:
    there would be no way to set it."""
    async with asyncio.timeout(WAIT), Runtime(timing=TIMING) as runtime:
        session = await runtime.open(fake_agent(2, "--models"), tmp_path)
        assert all(option.id != "model" for option in session.info().details.config_options)
        with pytest.raises(InvalidConfiguration):
            await session.configure("model", "opus")

"""`session/fork` on `omniagent acp` (a real subprocess, against the fake LLM), driven by our own ACP client in v2 and
v1: the fork is a new engine session holding the whole conversation, it continues it (the model reads the earlier
turns), the source stays as it was, and the fork lists and resumes like any session. Every agent line is validated
against the negotiated version's JSON schema (issue "One system": fork on `omniagent acp`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.acp import v1, v2
from omniagent.runtime.adapters.acp.client import ClientHandlers, PermissionRequest, SessionEvent, open_acp_client
from omniagent.testing import FakeLLMServer, Reply, Scenario
from omniagent.wire.messages import INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError
from tests.faces.acp.agent_harness import agent_argv, agent_env, check_transcript, prepare

WAIT = 30.0  # seconds: bound on every test body


class Client:
    """Records updates; never asked for permission here (no tool calls)."""

    def __init__(self) -> None:
        self.events: list[SessionEvent] = []

    async def on_update(self, event: SessionEvent) -> None:
        self.events.append(event)

    async def on_permission(self, request: PermissionRequest) -> str | None:
        raise AssertionError(f"unexpected permission request {request}")

    def handlers(self) -> ClientHandlers:
        return ClientHandlers(on_update=self.on_update, on_permission=self.on_permission)

    def replayed(self, session_id: str) -> list[tuple[str, Any]]:
        """(kind, messageId) of the messages replayed for a session; v1 chunks count as their whole message."""
        out: list[tuple[str, Any]] = []
        for event in self.events:
            kind = str(event.raw["sessionUpdate"]).removesuffix("_chunk")
            entry = (kind, event.raw.get("messageId"))
            if event.session_id == session_id and kind in ("user_message", "agent_message") and entry not in out:
                out.append(entry)
        return out


def _text(version: int, text: str) -> Any:
    return v2.ContentBlockText(text=text) if version == 2 else v1.ContentBlockText(type="text", text=text)


async def test_v2_fork_continues_the_conversation_and_leaves_the_source_alone(tmp_path: Path) -> None:
    """With `capabilities.session.fork` advertised, `session/fork` answers a new sessionId and
    configOptions; a prompt in the fork reaches the model with the earlier turn; the source replays only its own
    turn, the fork replays both; both are listed; the fork works in the request's `cwd`."""
    scenario = Scenario(steps=[Reply(text="Noted: apple."), Reply(text="The word was apple.")])
    async with FakeLLMServer(scenario) as llm:
        data, ws, log = prepare(tmp_path, llm)
        other = tmp_path / "other"
        other.mkdir()
        client = Client()
        async with (
            asyncio.timeout(WAIT),
            open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=agent_env()) as acp,
        ):
            assert acp.version == 2 and acp.supports("fork")
            source = (await acp.new_session(str(ws))).session_id
            await acp.prompt(source, [_text(2, "Remember the word apple")])
            forked = await acp.fork_session(source, str(other))
            fork = forked.session_id
            assert fork != source and [o.config_id for o in forked.config_options][:3] == ["model", "reasoning", "mode"]
            await acp.prompt(fork, [_text(2, "What was the word?")])
            sent = json.dumps(llm.requests[-1].body)
            assert "Remember the word apple" in sent and "Noted: apple." in sent and "What was the word?" in sent

            listed = {s.session_id: (s.title, s.cwd) for s in (await acp.list_sessions()).sessions}
            assert listed == {
                source: ("Remember the word apple", str(ws)),
                fork: ("Remember the word apple", str(other)),
            }
            client.events.clear()
            await acp.resume_session(source, str(ws), replay=True)
            await acp.resume_session(fork, str(other), replay=True)
            assert client.replayed(source) == [("user_message", "m1"), ("agent_message", "m2")]
            assert client.replayed(fork) == [
                ("user_message", "m1"),
                ("agent_message", "m2"),
                ("user_message", "m3"),
                ("agent_message", "m4"),
            ]

            with pytest.raises(RpcError) as unknown:
                await acp.fork_session("0" * 32, str(ws))
            assert unknown.value.code == RESOURCE_NOT_FOUND
            with pytest.raises(RpcError) as missing:
                await acp.fork_session(source, str(tmp_path / "missing"))
            assert missing.value.code == INVALID_PARAMS
            assert len((await acp.list_sessions()).sessions) == 2  # a refused fork makes nothing
    check_transcript(log)


async def test_v1_fork_is_served_and_the_fork_loads_with_the_earlier_turn(tmp_path: Path) -> None:
    """v1's unstable `session/fork` (gated by `sessionCapabilities.fork`) answers sessionId, modes
    and configOptions; `session/load` of the fork replays the copied turn, and its next prompt carries it."""
    scenario = Scenario(steps=[Reply(text="First answer."), Reply(text="Second answer.")])
    async with FakeLLMServer(scenario) as llm:
        data, ws, log = prepare(tmp_path, llm)
        client = Client()
        async with (
            asyncio.timeout(WAIT),
            open_acp_client(
                agent_argv(data, log), handlers=client.handlers(), env=agent_env(), protocol_version=1
            ) as acp,
        ):
            assert acp.version == 1 and acp.supports("fork")
            source = (await acp.new_session(str(ws))).session_id
            await acp.prompt(source, [_text(1, "First question")])
            forked = await acp.fork_session(source, str(ws))
            assert forked.session_id != source and forked.modes.current_mode_id == "ask"
            client.events.clear()
            await acp.load_session(forked.session_id, str(ws))
            assert client.replayed(forked.session_id) == [("user_message", "m1"), ("agent_message", "m2")]
            end = await acp.prompt(forked.session_id, [_text(1, "Second question")])
            assert end.stop_reason == "end_turn"
            sent = json.dumps(llm.requests[-1].body)
            assert "First question" in sent and "First answer." in sent and "Second question" in sent
    check_transcript(log)

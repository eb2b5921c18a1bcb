"""The hub's ACP face in v2, on the wire details the ACP conformance kit checks (`HubAcpConnection`, the mock agent's
`turn` script, real sockets, raw lines): a replay from the start says each streamed message whole and empty before
its first chunk (a replay from a cursor does not: the client has the message), and a permission answer that
approves nothing it knows (an unknown `_` outcome, an option not offered) is declined so the turn goes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omniagent.hub.hub import Hub
from omniagent.protocols.sidecar.commands import PermissionAnswer
from omniagent.protocols.sidecar.events import (
    Execute,
    PermissionChoice,
    PermissionRequest,
    ToolStatus,
    ToolUpdate,
)
from omniagent.runtime.runtime import Runtime
from omniagent.serving.acp import asks
from tests.faces.acp.hub_harness import RawClient, acp_server, sequences, updates_of

TURN = Runtime.load_mock("turn")  # "Let me check. ", a permission (allow once / deny once), "Done.", end


def _kinds(messages: list[dict[str, Any]]) -> list[tuple[str, Any, Any]]:
    """(sessionUpdate, messageId, content) of each update among `messages`, for the messages' updates."""
    updates = [p["update"] for p in updates_of(messages)]
    return [(u["sessionUpdate"], u.get("messageId"), u.get("content")) for u in updates if "messageId" in u]


def _idle(message: dict[str, Any]) -> bool:
    return message.get("method") == "session/update" and message["params"]["update"].get("state") == "idle"


async def _one_turn(client: RawClient, cwd: Path, outcome: dict[str, Any]) -> str:
    """A v2 session whose turn's permission is answered `outcome`; its id once the turn is idle."""
    await client.request(0, "initialize", {"protocolVersion": 2})
    session_id: str = (await client.request(1, "session/new", {"cwd": str(cwd)}))["result"]["sessionId"]
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    assert "messageId" in (await client.request(2, "session/prompt", prompt))["result"]
    asked = await client.until(lambda m: m.get("method") == "session/request_permission")
    client.send({"id": asked["id"], "result": {"outcome": outcome}})
    idle = await client.until(_idle)
    assert idle["params"]["update"]["stopReason"] == "end_turn"
    return session_id


async def test_a_replay_from_the_start_primes_each_streamed_message_and_a_cursor_replay_does_not(
    tmp_path: Path,
) -> None:
    allow = {"outcome": "selected", "optionId": "allow_once"}
    async with Hub.start(mock=TURN) as hub, acp_server(hub) as connect:
        owner = await connect()
        session_id = await _one_turn(owner, tmp_path, allow)
        chunk = "agent_message_chunk"
        # Live, chunks stream as the agent sends them: no whole message first.
        assert [k for k in _kinds(owner.seen) if k[1] == "m1"] == [
            (chunk, "m1", {"type": "text", "text": "Let me check. "}),
            (chunk, "m1", {"type": "text", "text": "Done."}),
        ]

        resumer = await connect()
        await resumer.request(0, "initialize", {"protocolVersion": 2})
        params = {"sessionId": session_id, "cwd": str(tmp_path), "replayFrom": {"type": "start"}}
        resumed = await resumer.request(1, "session/resume", params)
        replayed = _kinds(resumer.seen[: resumer.seen.index(resumed)])
        assert [k for k in replayed if k[1] == "m1"] == [
            ("agent_message", "m1", []),
            (chunk, "m1", {"type": "text", "text": "Let me check. "}),
            (chunk, "m1", {"type": "text", "text": "Done."}),
        ]

        # From a cursor inside the message, the client has its start: an empty whole message would erase it.
        cursor = sequences(owner.seen)[1]
        watcher = await connect()
        await watcher.request(0, "initialize", {"protocolVersion": 2})
        attach = {"sessionId": session_id, "role": "observer", "historyPolicy": "full", "after": cursor}
        attached = await watcher.request(1, "session/attach", attach)
        after = _kinds(watcher.seen[: watcher.seen.index(attached)])
        assert [k for k in after if k[1] == "m1"] == [(chunk, "m1", {"type": "text", "text": "Done."})]


@pytest.mark.parametrize(
    "outcome",
    [{"outcome": "_kit/unknown"}, {"outcome": "selected", "optionId": "allow_always"}, {"outcome": "later"}],
    ids=["underscore-outcome", "option-not-offered", "future-outcome"],
)
async def test_an_answer_that_approves_nothing_offered_is_declined_and_the_turn_goes_on(
    tmp_path: Path, outcome: dict[str, Any]
) -> None:
    async with Hub.start(mock=TURN) as hub, acp_server(hub) as connect:
        client = await connect()
        await _one_turn(client, tmp_path, outcome)
        states = [p["update"].get("state") for p in updates_of(client.seen) if "state" in p["update"]]
        assert states == ["running", "requires_action", "running", "idle"]


def _request(*options: PermissionChoice) -> PermissionRequest:
    tool = ToolUpdate(id="t", kind=Execute(), title="ls", status=ToolStatus.PENDING)
    return PermissionRequest(id="r1", tool=tool, options=list(options))


@pytest.mark.parametrize(
    ("result", "options", "answer"),
    [
        ({"outcome": {"outcome": "selected", "optionId": "allow_once"}}, None, PermissionChoice.ALLOW_ONCE),
        ({"outcome": {"outcome": "cancelled"}}, None, None),  # the client's session/cancel closes it
        ({"outcome": {"outcome": "_kit/unknown"}}, None, PermissionChoice.DENY_ONCE),
        ({"outcome": {"outcome": "selected", "optionId": "reject_always"}}, None, PermissionChoice.DENY_ONCE),
        ({"nothing": True}, None, PermissionChoice.DENY_ONCE),
        # Never a lasting rule from a reply we cannot read: without "reject once" it stays open (a cancel ends it).
        ({"outcome": {"outcome": "_kit/unknown"}}, [PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ALWAYS], None),
    ],
)
def test_the_permission_answer_of_each_reply(
    result: Any, options: list[PermissionChoice] | None, answer: PermissionChoice | None
) -> None:
    offered = options or [PermissionChoice.ALLOW_ONCE, PermissionChoice.ALLOW_ALWAYS, PermissionChoice.DENY_ONCE]
    got = asks.permission_answer(_request(*offered), result)
    assert got == (PermissionAnswer(choice=answer) if answer is not None else None)

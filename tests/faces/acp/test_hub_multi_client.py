"""Many ACP clients on one hub session (`AcpAgent`, the mock agent, real sockets): a client attaching mid-turn
gets the history then the live events, in order; the first answer to a permission wins and the other controller's
request is withdrawn (`$/cancel_request`) and said resolved; an observer reads but may not prompt and is never asked;
a cursor replays only what follows it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from omniagent.hub.hub import Hub
from omniagent.runtime.runtime import Runtime
from tests.faces.acp.hub_harness import acp_server, sequences, updates_of

TURN = Runtime.load_mock("turn")


def _is_permission(message: dict[str, Any]) -> bool:
    return message.get("method") == "session/request_permission"


def _prompt(request_id: int, session_id: str, text: str) -> dict[str, Any]:
    return {
        "id": request_id,
        "method": "session/prompt",
        "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
    }


def _texts(messages: list[dict[str, Any]], kind: str = "agent_message_chunk") -> str:
    chunks = [p["update"] for p in updates_of(messages) if p["update"]["sessionUpdate"] == kind]
    return "".join(c["content"]["text"] for c in chunks)


def _not_user(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Without the user message chunks (a prompt's text, shown to the clients that did not send it)."""
    return [m for m in messages if m.get("params", {}).get("update", {}).get("sessionUpdate") != "user_message_chunk"]


async def test_a_client_attaching_mid_turn_gets_history_then_live_and_the_first_answer_wins(tmp_path: Path) -> None:
    async with Hub.start(mock=TURN) as hub, acp_server(hub) as connect:
        first, second = await connect(), await connect()
        await first.request(0, "initialize", {"protocolVersion": 1})
        opened = await first.request(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
        session_id = opened["result"]["sessionId"]
        assert opened["result"]["_meta"]["omniagent"]["agent"] == "mock"
        first.send(_prompt(2, session_id, "go"))
        asked_first = await first.until(_is_permission)

        await second.request(0, "initialize", {"protocolVersion": 1})
        attach = {"sessionId": session_id, "role": "controller", "historyPolicy": "full"}
        attached = await second.request(1, "session/attach", attach)
        assert attached["result"]["role"] == "controller"
        before = second.seen[: second.seen.index(attached)]
        # The history came before the answer, the same events the first client saw, and the open request with it;
        # the first client's prompt is shown to the second as a user message (its own client was not echoed it).
        assert sequences(_not_user(before)) == sequences(first.seen) and _texts(before) == "Let me check. "
        assert _texts(before, "user_message_chunk") == "go" and _texts(first.seen, "user_message_chunk") == ""
        [asked_second] = [m for m in before if _is_permission(m)]
        assert asked_second["params"]["_meta"]["omniagent"]["requestId"] == "r1"
        opened_at = asked_second["params"]["_meta"]["omniagent"]["sequence"]
        assert attached["result"]["_meta"]["omniagent"]["cursor"] >= opened_at

        second.send(
            {"id": asked_second["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}}
        )
        withdrawn = await first.until(lambda m: m.get("method") == "$/cancel_request")
        assert withdrawn["params"] == {"requestId": asked_first["id"]}
        [resolved] = [m for m in first.seen if m.get("method") == "_omniagent/request_resolved"]
        assert resolved["params"]["sessionId"] == session_id and resolved["params"]["requestId"] == "r1"
        # Too late: the first client's answer changes nothing.
        first.send({"id": asked_first["id"], "result": {"outcome": {"outcome": "selected", "optionId": "reject_once"}}})
        answer = await first.until(lambda m: m.get("id") == 2 and "method" not in m)
        assert answer["result"] == {"stopReason": "end_turn"}
        assert _texts(first.seen) == "Let me check. Done."

        await second.until(lambda m: "Done." in str(m))
        assert _texts(second.seen) == "Let me check. Done."
        assert sequences(_not_user(second.seen)) == sequences(first.seen)
        assert sequences(first.seen) == sorted(set(sequences(first.seen)))


async def test_an_observer_reads_from_its_cursor_is_never_asked_and_may_not_prompt(tmp_path: Path) -> None:
    async with Hub.start(mock=TURN) as hub, acp_server(hub) as connect:
        owner, watcher = await connect(), await connect()
        await owner.request(0, "initialize", {"protocolVersion": 2})
        session_id = (await owner.request(1, "session/new", {"cwd": str(tmp_path)}))["result"]["sessionId"]
        prompted = await owner.request(2, "session/prompt", _prompt(2, session_id, "go")["params"])
        meta = prompted["result"]["_meta"]["omniagent"]
        assert meta["delivery"] == "started"
        asked = await owner.until(_is_permission)
        # v2: the answer `{}` came first, then the echo of the prompt, then the turn.
        kinds = [p["update"]["sessionUpdate"] for p in updates_of(owner.seen)]
        assert kinds[:2] == ["user_message", "state_update"] and "requires_action" in str(owner.seen)
        cursor = sequences(owner.seen)[0]

        await watcher.request(0, "initialize", {"protocolVersion": 2})
        attach = {"sessionId": session_id, "role": "observer", "historyPolicy": "full", "after": cursor}
        attached = await watcher.request(1, "session/attach", attach)
        assert attached["result"]["role"] == "observer"
        assert all(s > cursor for s in sequences(watcher.seen)) and sequences(watcher.seen)
        refused = await watcher.request(2, "session/prompt", _prompt(2, session_id, "me too")["params"])
        assert refused["error"]["code"] == -32600 and "observer" in refused["error"]["message"]
        listed = await watcher.request(3, "session/list", {})
        [entry] = listed["result"]["sessions"]
        assert entry["sessionId"] == session_id and entry["_meta"]["omniagent"]["agent"] == "mock"
        assert entry["_meta"]["omniagent"]["clients"] == 2

        owner.send({"id": asked["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}})
        idle = await watcher.until(
            lambda m: m.get("method") == "session/update" and m["params"]["update"].get("state") == "idle"
        )
        assert idle["params"]["update"]["stopReason"] == "end_turn"
        assert not any(_is_permission(m) for m in watcher.seen)
        assert (await watcher.request(4, "session/detach", {"sessionId": session_id}))["result"] == {}
        assert len(hub.session(session_id).clients) == 1


def _two_turns(steer: bool) -> dict[str, Any]:
    """Turn 1 asks a permission, turn 2 says `second`; a model option to configure."""
    permission = {
        "id": "r1",
        "tool": {"id": "tool-1", "kind": "Execute", "title": "make", "status": "Pending"},
        "options": ["AllowOnce", "DenyOnce"],
    }
    model = {
        "id": "model",
        "name": "Model",
        "category": "model",
        "kind": {"Select": {"choices": [{"value": "sonnet", "label": "Sonnet"}, {"value": "opus", "label": "Opus"}]}},
        "current": "sonnet",
        "live": True,
    }
    first = [
        {"Emit": {"TextDelta": {"message_id": "m1", "text": "first "}}},
        {"Emit": {"RequestOpened": {"Permission": permission}}},
        "AwaitAnswer",
        {"End": {"Completed": {"source": "Protocol"}}},
    ]
    second = [{"Emit": {"TextDelta": {"message_id": "m2", "text": "second"}}}, {"End": {"Completed": {}}}]
    return {"turns": [first, second], "steer": steer, "options": [model]}


@pytest.mark.parametrize("steer", [False, True])
async def test_two_controllers_prompt_by_the_turn_rules_and_see_each_others_configuration(
    steer: bool, tmp_path: Path
) -> None:
    """A second controller's prompt while a turn runs is queued (its answer comes when its own turn ends) or, with
    an agent that steers, joins the running turn (its answer comes when that turn ends); a configuration one
    controller sets reaches the other as `config_option_update`."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps(_two_turns(steer)))
    async with Hub.start(mock=Runtime.load_mock(str(script))) as hub, acp_server(hub) as connect:
        first, second = await connect(), await connect()
        await first.request(0, "initialize", {"protocolVersion": 1})
        session_id = (await first.request(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))["result"][
            "sessionId"
        ]
        await second.request(0, "initialize", {"protocolVersion": 1})
        await second.request(1, "session/attach", {"sessionId": session_id, "role": "controller"})
        configured = await first.request(
            2, "session/set_config_option", {"sessionId": session_id, "configId": "model", "value": "opus"}
        )
        assert configured["result"]["configOptions"][0]["currentValue"] == "opus"
        # The other controller is told (a wait that times out when it is not).
        await second.until(lambda m: "config_option_update" in str(m) and "'currentValue': 'opus'" in str(m))

        first.send(_prompt(3, session_id, "go"))
        asked = await first.until(_is_permission)
        second.send(_prompt(2, session_id, "and this"))
        await second.until(_is_permission)
        first.send({"id": asked["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}})
        assert (await first.until(lambda m: m.get("id") == 3))["result"] == {"stopReason": "end_turn"}
        answer = await second.until(lambda m: m.get("id") == 2 and "method" not in m)
        assert answer["result"] == {"stopReason": "end_turn"}
        # Queued: the second prompt's own turn ran before its answer; steered: it ended with the first turn.
        assert ("second" in _texts(second.seen)) is not steer


def _option_updates(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p["update"] for p in updates_of(messages) if p["update"]["sessionUpdate"] == "config_option_update"]


def _model(options: list[dict[str, Any]]) -> Any:
    return next(option["currentValue"] for option in options if option["id"] == "model")


async def test_a_load_tells_the_options_in_its_answer_and_after_it_only_their_changes(tmp_path: Path) -> None:
    """The answer to a load carries the session's options as they are: neither the replay nor what follows repeats
    them (an agent just resumed reports them again as it settles); a later change is told."""
    async with Hub.start(mock=Runtime.load_mock("configure")) as hub, acp_server(hub) as connect:
        first, second = await connect(), await connect()
        await first.request(0, "initialize", {"protocolVersion": 1})
        session_id = (await first.request(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))["result"][
            "sessionId"
        ]
        configure = {"sessionId": session_id, "configId": "model", "value": "opus"}
        await first.request(2, "session/set_config_option", configure)
        await first.until(lambda m: bool(_option_updates([m])))

        await second.request(0, "initialize", {"protocolVersion": 1})
        loaded = await second.request(
            1, "session/load", {"sessionId": session_id, "cwd": str(tmp_path), "mcpServers": []}
        )
        assert _model(loaded["result"]["configOptions"]) == "opus"
        await first.request(3, "session/set_config_option", configure | {"value": "sonnet"})
        told = await second.until(lambda m: bool(_option_updates([m])))
        assert _model(_option_updates([told])[0]["configOptions"]) == "sonnet"
        assert _option_updates(second.seen[: second.seen.index(told)]) == []

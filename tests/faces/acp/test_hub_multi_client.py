"""Many ACP clients on one hub session (`HubAcpConnection`, the mock agent, real sockets): a client attaching mid-turn
gets the history then the live events, in order; the first answer to a permission wins and the other controller's
request is withdrawn (`$/cancel_request`) and said resolved; an observer reads but may not prompt and is never asked;
a cursor replays only what follows it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def _texts(messages: list[dict[str, Any]]) -> str:
    chunks = [p["update"] for p in updates_of(messages) if p["update"]["sessionUpdate"] == "agent_message_chunk"]
    return "".join(c["content"]["text"] for c in chunks)


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
        # The history came before the answer, the same events the first client saw, and the open request with it.
        assert sequences(before) == sequences(first.seen) and _texts(before) == "Let me check. "
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
        assert sequences(second.seen) == sequences(first.seen)
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

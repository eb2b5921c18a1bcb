"""`omniagent acp --hub URL`: an editor that speaks ACP on stdio reaches a real hub's sessions through the bridge
(`faces/acp/bridge.py`). With `--session`, the editor's `session/new` joins a session another client opened over
the sidecar wire: the history first (the other client's prompt as a user message), then live, and its answer to
the waiting permission ends the turn for the client that opened it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.hub.hub_process import ROOT, WAIT, WireClient, running_hub


class Editor:
    """The bridge process, driven as an editor drives its agent: JSON-RPC lines on its stdin and stdout."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.seen: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def until(self, found: Any) -> dict[str, Any]:
        assert self.proc.stdout is not None
        async with asyncio.timeout(WAIT):
            for message in self.seen:
                if found(message):
                    return message
            while True:
                line = await self.proc.stdout.readline()
                assert line, f"the bridge ended; saw {self.seen[-3:]}"
                message = json.loads(line)
                self.seen.append(message)
                if found(message):
                    return message


def _update(kind: str) -> Any:
    return lambda m: m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == kind


async def test_an_editor_joins_a_session_opened_elsewhere_and_answers_its_permission(tmp_path: Path) -> None:
    async with running_hub(tmp_path / "hub", mock="turn") as hub, WireClient.connect(hub) as opener:
        session = (await opener.ok("open", agent="mock", dir=str(tmp_path)))["id"]
        await opener.ok("prompt", session=session, text="go")
        await opener.until(lambda line: "RequestOpened" in str(line.get("event", {}).get("kind")))

        env = os.environ | {"OMNIAGENT_HUB_TOKEN": hub.token, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
        proc = await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "omniagent", "acp", "--hub", hub.url, "--session", session],
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
        )
        editor = Editor(proc)
        editor.send({"id": 0, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}})
        assert (await editor.until(lambda m: m.get("id") == 0))["result"]["protocolVersion"] == 1
        editor.send({"id": 1, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}})
        joined = await editor.until(lambda m: m.get("id") == 1)
        assert joined["result"]["sessionId"] == session
        said = await editor.until(_update("user_message_chunk"))
        assert said["params"]["update"]["content"]["text"] == "go"
        text = await editor.until(_update("agent_message_chunk"))
        assert text["params"]["update"]["content"]["text"] == "Let me check. "
        asked = await editor.until(lambda m: m.get("method") == "session/request_permission")
        assert editor.seen.index(said) < editor.seen.index(text) < editor.seen.index(asked)
        editor.send({"id": asked["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}})

        ended = await opener.until(lambda line: "TurnEnded" in str(line.get("event", {}).get("kind")))
        assert ended["event"]["kind"]["TurnEnded"]["stop"] == {"Completed": {"source": "Protocol"}}
        done = await editor.until(lambda m: "Done." in json.dumps(m))
        assert done["params"]["sessionId"] == session

        assert proc.stdin is not None
        proc.stdin.close()
        async with asyncio.timeout(WAIT):
            assert await proc.wait() == 0
        # The editor left; the session did not.
        [listed] = [s for s in (await opener.ok("list"))["sessions"] if s["id"] == session]
        assert listed["activity"] != "ended"


async def _refused(env: dict[str, str], *args: str) -> tuple[int | None, bytes, bytes]:
    """Run `omniagent acp ARGS` with nothing on stdin to its end: (exit code, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "omniagent", "acp", *args],
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env | {"PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"},
    )
    async with asyncio.timeout(WAIT):
        out, err = await proc.communicate()
    return proc.returncode, out, err


async def test_without_a_token_the_bridge_says_so_and_exits_1(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OMNIAGENT_HUB_TOKEN"} | {"XDG_DATA_HOME": str(tmp_path)}
    code, out, err = await _refused(env, "--hub", "http://127.0.0.1:9")
    assert code == 1 and out == b""
    assert b"no hub token" in err


async def test_a_wrong_token_is_refused_and_nothing_reaches_stdout(tmp_path: Path) -> None:
    async with running_hub(tmp_path / "hub", mock="turn") as hub:
        code, out, err = await _refused(dict(os.environ), "--hub", hub.url, "--token", "not-the-token")
    assert code == 1 and out == b""
    assert b"HTTP 401" in err and b"not-the-token" not in err

"""Escape attempts through the engine's tools, over a real `omniagent rpc` in auto mode against the fake LLM (issue 9
parts 1-2; docs/security.md, "A hostile model"). The fake LLM plays the hostile model: it scripts the tool calls,
and each test asserts what the model is told in its next request, and that nothing left the workspace."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from omniagent.engine.interactions.permissions import SET_MODE_METHOD
from omniagent.engine.sandboxes import SET_SANDBOX_METHOD
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply
from tests.engine.rpc_harness import RpcProcess, write_providers

MODEL = "fake-anthropic/fake-model"
KEY_VAR = "LAB_SECRET_TOKEN"  # a custom key variable providers.json names: no `_API_KEY` suffix to filter on
KEY_VALUE = "lab-secret-4f1c"
SUFFIX_VALUE = "suffix-secret-9a2e"
STORED_KEY = "stored-secret-77b0"
AGENT_SECRET = "codex-secret-31d8"
OUTSIDE_SECRET = "outside-secret-c3a9"
SECRETS = (KEY_VALUE, SUFFIX_VALUE, STORED_KEY, AGENT_SECRET, OUTSIDE_SECRET)
SANDBOXED_WHY = "the command ran in the exec sandbox"
OUTSIDE_WHY = "is outside the workspace"


@dataclass
class World:
    """The engine under attack and the places a hostile model must not reach."""

    rpc: RpcProcess
    llm: FakeLLMServer
    data: Path
    home: Path
    ws: Path
    outside: Path
    sid: str = ""


def _prepare(tmp_path: Path, llm: FakeLLMServer) -> tuple[Path, Path, Path, Path]:
    data, home, ws, outside = (tmp_path / name for name in ("data", "home", "ws", "outside"))
    for directory in (ws, outside, home / ".codex"):
        directory.mkdir(parents=True)
    (outside / "secret.txt").write_text(f"{OUTSIDE_SECRET}\n")
    (home / ".codex" / "auth.json").write_text(json.dumps({"token": AGENT_SECRET}))
    write_providers(data, llm)
    providers = json.loads((data / "providers.json").read_text())
    lab = dict(providers["providers"][0], id="lab", name="lab")
    del lab["api_key"]
    lab["auth"] = {"api_key": {"source": {"env": KEY_VAR}}}
    providers["providers"].append(lab)
    (data / "providers.json").write_text(json.dumps(providers))
    return data, home, ws.resolve(), outside.resolve()


async def _start(tmp_path: Path, llm: FakeLLMServer, **env: str) -> World:
    data, home, ws, outside = _prepare(tmp_path, llm)
    engine_env = {"HOME": str(home), KEY_VAR: KEY_VALUE, "OTHER_API_KEY": SUFFIX_VALUE, **env}
    world = World(await RpcProcess.start(data, env=engine_env), llm, data, home, ws, outside)
    await world.rpc.call("auth.set_api_key", {"provider_id": "fake-chat", "api_key": STORED_KEY})
    created = await world.rpc.call("session.create", {"workspace_path": str(ws), "model": MODEL})
    world.sid = str(created["session"]["id"])
    await world.rpc.call(SET_MODE_METHOD, {"session_id": world.sid, "mode": "auto"})
    return world


@pytest.fixture
async def world(tmp_path: Path, llm: FakeLLMServer) -> AsyncIterator[World]:
    w = await _start(tmp_path, llm)
    try:
        yield w
    finally:
        await w.rpc.close()


def _calls(*calls: tuple[str, dict[str, object]]) -> Reply:
    return Reply(tool_calls=tuple(FakeToolCall(name, args, f"call_{i}") for i, (name, args) in enumerate(calls)))


async def _turn(w: World, *calls: tuple[str, dict[str, object]], sid: str = "") -> dict[str, tuple[str, bool]]:
    """One turn in which the model makes `calls`; returns what the model is told: call id → (text, is_error)."""
    w.llm.enqueue(_calls(*calls), Reply(text="done"))
    seen = len(w.llm.requests)
    start = len(w.rpc.lines)
    content = [{"type": "text", "text": "go"}]
    params = {"session_id": sid or w.sid, "input": {"type": "content", "content": content}}
    w.rpc.send("session.send_input", params)
    await w.rpc.broadcast("run.done", after=start, within=60.0)
    told = _tool_results(w.llm.requests[seen + 1].body)
    assert set(told) == {f"call_{i}" for i in range(len(calls))}
    _assert_no_secret(w)
    return told


def _tool_results(body: object) -> dict[str, tuple[str, bool]]:
    assert isinstance(body, dict)
    found: dict[str, tuple[str, bool]] = {}
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                found[block["tool_use_id"]] = (str(block["content"]), bool(block.get("is_error", False)))
    return found


def _assert_no_secret(w: World) -> None:
    """No secret on the wire, in any request to the model, or in the store."""
    wire = json.dumps(w.rpc.lines)
    requests = json.dumps([r.body for r in w.llm.requests])
    for secret in SECRETS:
        assert secret not in wire and secret not in requests, secret


def _blocked(told: tuple[str, bool], why: str) -> None:
    text, is_error = told
    assert is_error, text
    assert why in text, text


async def test_file_tools_refuse_dotdot_absolute_and_symlinked_paths_out(world: World) -> None:
    """Issue 9: `../`, absolute paths, a file link and a directory link out are refused, and the model is told it
    is outside the workspace; a link that stays inside works. Nothing outside is read or written."""
    w = world
    (w.ws / "inside.txt").write_text("inside text\n")
    (w.ws / "link_in.txt").symlink_to(w.ws / "inside.txt")
    (w.ws / "link_out.txt").symlink_to(w.outside / "secret.txt")
    (w.ws / "dir_out").symlink_to(w.outside, target_is_directory=True)
    (w.ws / "rel_out").symlink_to(Path("..") / "outside" / "secret.txt")
    told = await _turn(
        w,
        ("read", {"path": "../outside/secret.txt"}),
        ("read", {"path": str(w.outside / "secret.txt")}),
        ("read", {"path": "link_out.txt"}),
        ("read", {"path": "dir_out/secret.txt"}),
        ("read", {"path": "rel_out"}),
        ("write", {"path": "../outside/planted.txt", "content": "x"}),
        ("write", {"path": "dir_out/planted.txt", "content": "x"}),
        ("write", {"path": "link_out.txt", "content": "x"}),
        ("edit", {"path": "link_out.txt", "old_string": "secret", "new_string": "pwned"}),
        ("search", {"regex": "secret", "path": "dir_out"}),
        ("read", {"path": "link_in.txt"}),
        ("search", {"regex": "secret"}),
    )
    for i in range(10):
        _blocked(told[f"call_{i}"], OUTSIDE_WHY)
    assert told["call_10"] == ("     1\tinside text", False)
    assert told["call_11"] == ("no matching lines found", False)  # links out are not searched
    assert sorted(p.name for p in w.outside.iterdir()) == ["secret.txt"]
    assert (w.outside / "secret.txt").read_text() == f"{OUTSIDE_SECRET}\n"


async def test_exec_cannot_read_keys_credentials_other_processes_or_the_data_dir(world: World) -> None:
    """Issue 9: a sandboxed command sees no provider key (not even one providers.json names), cannot read the
    stored credentials, another agent's credential dir or the engine's environment, and cannot undo the mounts
    (every capability is dropped, even as root). Each blocked attempt tells the model it ran in the sandbox."""
    w = world
    engine_pid = w.rpc.proc.pid
    told = await _turn(
        w,
        ("exec", {"command": f'env | grep -e {KEY_VAR} -e OTHER_API_KEY || echo "no keys"; exit 3'}),
        ("exec", {"command": f"cat {w.data / 'credentials.json'}"}),
        ("exec", {"command": f"ls -A {w.data}; cat {w.data / 'engine.sqlite3'} | head -c 100; false"}),
        ("exec", {"command": f"cat {w.home / '.codex' / 'auth.json'}"}),
        ("exec", {"command": f"cat /proc/{engine_pid}/environ"}),
        ("exec", {"command": f"tr '\\0' '\\n' < /proc/$PPID/environ | grep {KEY_VAR}"}),
        ("exec", {"command": f"umount {w.data} && cat {w.data / 'credentials.json'}"}),
    )
    assert told["call_0"][0].startswith("no keys\n[exit code 3]")
    assert "No such file or directory" in told["call_1"][0]
    assert told["call_2"][0].startswith("cat: ")  # the data dir is an empty, read-only directory in the sandbox
    assert "No such file or directory" in told["call_3"][0]
    assert "No such file or directory" in told["call_4"][0]  # no process of the host is visible
    assert "must be superuser" in told["call_6"][0] or "permission denied" in told["call_6"][0].lower()
    for i in range(7):
        _blocked(told[f"call_{i}"], SANDBOXED_WHY)


async def test_exec_cannot_write_outside_the_workspace(world: World) -> None:
    """Issue 9: the workspace is writable; the rest of the file system is read-only, and /tmp is private."""
    w = world
    planted = Path("/var/tmp") / f"omniagent-escape-{uuid.uuid4().hex}"
    told = await _turn(
        w,
        ("exec", {"command": "echo made > made.txt && cat made.txt"}),
        ("exec", {"command": f"echo x > {planted}"}),
        ("exec", {"command": f"echo x > {w.outside / 'planted.txt'}"}),
        ("exec", {"command": f"echo x > {w.data / 'planted.txt'}"}),
    )
    assert told["call_0"] == ("made\n[exit code 0]", False)
    assert (w.ws / "made.txt").read_text() == "made\n"
    assert "Read-only file system" in told["call_1"][0]
    _blocked(told["call_1"], SANDBOXED_WHY)
    # /tmp is a private, empty tmpfs: the host's directories under it are not even there.
    assert "Directory nonexistent" in told["call_2"][0]
    _blocked(told["call_2"], SANDBOXED_WHY)
    assert "Read-only file system" in told["call_3"][0]  # the data dir: an empty read-only directory
    _blocked(told["call_3"], SANDBOXED_WHY)
    assert not planted.exists()
    assert sorted(p.name for p in w.outside.iterdir()) == ["secret.txt"]
    assert not (w.data / "planted.txt").exists()


@pytest.fixture
async def listener() -> AsyncIterator[tuple[int, list[int]]]:
    """A TCP listener on 127.0.0.1 outside the sandbox; the list counts the connections it accepted."""
    accepted: list[int] = []

    async def on_connect(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield port, accepted


def _connect(port: int) -> str:
    code = f"import socket; socket.create_connection(('127.0.0.1', {port}), 3).close(); print('connected')"
    # The interpreter itself, not the venv's link to it: a venv under /tmp is hidden by the sandbox's private /tmp.
    return f'{os.path.realpath(sys.executable)} -c "{code}"'


async def test_exec_has_no_network_unless_the_session_turns_it_on(
    world: World, listener: tuple[int, list[int]]
) -> None:
    """Issue 9: the network is off by default (a listener on the host's loopback is not reached) and on when the
    session's `network` option says so (then the same command reaches it: the test can fail)."""
    w = world
    port, accepted = listener
    told = await _turn(w, ("exec", {"command": _connect(port)}))
    _blocked(told["call_0"], SANDBOXED_WHY)
    assert "ConnectionRefusedError" in told["call_0"][0]
    assert accepted == []
    bad_mode = {"session_id": w.sid, "mode": "off"}
    assert await w.rpc.call_error(SET_SANDBOX_METHOD, bad_mode) == ErrorCode.BAD_REQUEST
    unknown = {"session_id": "0" * 32, "network": True}
    assert await w.rpc.call_error(SET_SANDBOX_METHOD, unknown) == ErrorCode.UNKNOWN_SESSION
    result = await w.rpc.call(SET_SANDBOX_METHOD, {"session_id": w.sid, "network": True})
    assert result.pop("limits")["processes"] > 0  # the exec limits in force: tests/e2e/test_rpc_limits.py
    assert result == {
        "session_id": w.sid,
        "mode": "sandboxed",
        "network": "on",  # the boolean of earlier clients is taken; the answer is the mode
        "ask_unsandboxed": True,
        "fetch_private": False,
        "allowed_domains": [],
    }
    told = await _turn(w, ("exec", {"command": _connect(port)}))
    assert told["call_0"] == ("connected\n[exit code 0]", False)
    assert accepted == [1]


SWAPPER = """
import os, sys
name, inside, outside, stop = sys.argv[1:]
swaps = 0
while not os.path.exists(stop):
    for target in (inside, outside):
        os.symlink(target, name + ".tmp")
        os.replace(name + ".tmp", name)
        swaps += 1
print(swaps)
"""


@contextlib.contextmanager
def _swapping(w: World) -> Iterator[list[int]]:
    """Real processes swapping `ws/swap` (a file link) and `ws/dswap` (a directory link) between a target inside
    and one outside, as fast as they can, until the block ends; the list then holds each one's swap count."""
    (w.ws / "inside.txt").write_text("inside text\n")
    (w.ws / "realdir").mkdir()
    stop = w.ws.parent / "stop-swapping"
    pairs = (("swap", "inside.txt", w.outside / "secret.txt"), ("dswap", "realdir", w.outside))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SWAPPER, str(w.ws / link), inside, str(outside), str(stop)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for link, inside, outside in pairs
    ]
    counts: list[int] = []
    try:
        yield counts
    finally:
        stop.touch()
        counts.extend(int(proc.communicate(timeout=10)[0]) for proc in procs)


async def test_a_symlink_swapped_during_reads_and_writes_never_leads_outside(world: World) -> None:
    """Issue 9 part 2: 150 reads and 150 writes while other processes swap the links they go through; every one
    either stays inside or is refused as outside; the outside secret is never read and nothing is written there."""
    w = world
    reads = [("read", {"path": "swap"}) for _ in range(150)]
    writes = [("write", {"path": "dswap/planted.txt", "content": f"w{i}\n"}) for i in range(150)]
    with _swapping(w) as counts:
        told = await _turn(w, *(call for pair in zip(reads, writes, strict=True) for call in pair))
    for i in range(300):
        text, is_error = told[f"call_{i}"]
        if OUTSIDE_WHY in text:
            assert is_error
        elif i % 2 == 0:
            assert (text, is_error) == ("     1\tinside text", False)
        else:
            assert not is_error and text.split()[0] in ("created", "overwrote"), text
    assert sorted(p.name for p in w.outside.iterdir()) == ["secret.txt"]
    assert (w.outside / "secret.txt").read_text() == f"{OUTSIDE_SECRET}\n"
    assert all(count > 0 for count in counts), counts


async def test_an_unsandboxed_exec_asks_even_in_auto_mode_unless_told_not_to(world: World) -> None:
    """Issue 9 part 1: `unsandboxed` is an explicit opt-in after which every exec is confirmed, auto mode or not;
    `ask_unsandboxed: false` is the user saying otherwise."""
    w = world
    result = await w.rpc.call(SET_SANDBOX_METHOD, {"session_id": w.sid, "mode": "unsandboxed"})
    assert result["mode"] == "unsandboxed"
    w.llm.enqueue(_calls(("exec", {"command": "echo free > free.txt"})), Reply(text="done"))
    start = len(w.rpc.lines)
    w.rpc.send("session.send_input", {"session_id": w.sid, "input": {"type": "content", "content": [
        {"type": "text", "text": "go"}]}})  # fmt: skip
    asked = await w.rpc.broadcast("interaction.requested", after=start)
    request = w.rpc.lines[asked]["params"]
    assert request["request"] == {
        "type": "confirm",
        "title": "Run a command without the sandbox?",
        "message": "Run `echo free > free.txt` in the workspace, outside the sandbox.",
    }
    assert not (w.ws / "free.txt").exists()
    await w.rpc.call(
        "interaction.respond",
        {"interaction_id": request["interaction_id"], "response": {"type": "confirm", "value": True}},
    )
    await w.rpc.broadcast("run.done", after=asked)
    assert (w.ws / "free.txt").read_text() == "free\n"
    await w.rpc.call(SET_SANDBOX_METHOD, {"session_id": w.sid, "ask_unsandboxed": False})
    start = len(w.rpc.lines)
    told = await _turn(w, ("exec", {"command": f"echo x > {w.outside / 'unsandboxed.txt'}"}))
    assert told["call_0"] == ("(no output)\n[exit code 0]", False)
    assert (w.outside / "unsandboxed.txt").exists()  # unconfined indeed: the opt-in is real
    assert "interaction.requested" not in w.rpc.names(start)


async def test_a_missing_sandbox_is_a_clear_tool_error_not_a_fallback(tmp_path: Path, llm: FakeLLMServer) -> None:
    """Issue 9 part 1: when bubblewrap is not there the command does not run, and the model is told how to
    install it (nothing runs unconfined behind the user's back)."""
    w = await _start(tmp_path, llm, PATH=str(tmp_path / "empty-bin"))
    try:
        told = await _turn(w, ("exec", {"command": "echo ran > ran.txt"}))
        _blocked(told["call_0"], "the exec sandbox needs bubblewrap (bwrap), which is not installed")
        assert "sudo apt-get install bubblewrap" in told["call_0"][0]
        assert not (w.ws / "ran.txt").exists()
    finally:
        await w.rpc.close()


async def _session_list_within(w: World, seconds: float) -> float:
    """Seconds `session.list` took to be answered (failing past `seconds`)."""
    loop = asyncio.get_running_loop()
    sent = loop.time()
    await w.rpc.response(w.rpc.send("session.list", {}), within=seconds)
    return loop.time() - sent


BACKTRACK = "(a+)+$"


async def test_a_backtracking_regex_never_freezes_the_engine(tmp_path: Path, llm: FakeLLMServer) -> None:
    """Issue 9 part 3: `(a+)+$` over `a`*32 + `!` runs for ages; meanwhile `session.list` answers within 1 s and
    another session's turn streams to its end; at the deadline the search is stopped and the run ends with a tool
    error the model reads."""
    w = await _start(tmp_path, llm, OMNIAGENT_SEARCH_TIMEOUT="6")
    try:
        (w.ws / "trap.txt").write_text("a" * 32 + "!\n")
        other = await w.rpc.call("session.create", {"workspace_path": str(w.ws), "model": MODEL})
        w.llm.enqueue(_calls(("search", {"regex": BACKTRACK})), Reply(text="hello from the other session"))
        w.llm.enqueue(Reply(text="done"))
        start = len(w.rpc.lines)
        w.rpc.send("session.send_input", {"session_id": w.sid, "input": {"type": "content", "content": [
            {"type": "text", "text": "search"}]}})  # fmt: skip
        running = await w.rpc.broadcast(
            "tool.state_changed", after=start, where=lambda p: p["state"]["type"] == "running"
        )
        w.rpc.send("session.send_input", {"session_id": other["session"]["id"], "input": {"type": "content",
            "content": [{"type": "text", "text": "hi"}]}})  # fmt: skip
        other_done = await w.rpc.broadcast(
            "run.done", after=running, where=lambda p: p["session_id"] == other["session"]["id"]
        )
        assert not any(
            line.get("method") == "run.done" and line["params"]["session_id"] == w.sid
            for line in w.rpc.lines[running:other_done]
        ), "the search ended before the other session's turn: the test proved nothing"
        for _ in range(3):
            assert await _session_list_within(w, 1.0) < 1.0
        assert not any(
            line.get("method") == "run.done" and line["params"]["session_id"] == w.sid for line in w.rpc.lines[running:]
        ), "the search ended before session.list was tried: the test proved nothing"
        done = await w.rpc.broadcast("run.done", after=running, within=30.0, where=lambda p: p["session_id"] == w.sid)
        states = [
            line["params"]["state"]
            for line in w.rpc.lines[running:done]
            if line.get("method") == "tool.state_changed" and line["params"]["session_id"] == w.sid
        ]
        assert states[-1]["type"] == "error"
        assert "did not finish within 6 s and was stopped" in states[-1]["error"]
        told = _tool_results(w.llm.requests[-1].body)
        _blocked(told["call_0"], "did not finish within 6 s and was stopped")
    finally:
        await w.rpc.close()


async def test_cancel_run_answers_at_once_while_a_search_backtracks(world: World) -> None:
    """Issue 9 part 3: `session.cancel_run` during the backtracking search is answered within 1 s, the run ends
    canceled and the worker process is gone."""
    w = world
    (w.ws / "trap.txt").write_text("a" * 32 + "!\n")
    w.llm.enqueue(_calls(("search", {"regex": BACKTRACK})))
    start = len(w.rpc.lines)
    w.rpc.send("session.send_input", {"session_id": w.sid, "input": {"type": "content", "content": [
        {"type": "text", "text": "search"}]}})  # fmt: skip
    await w.rpc.broadcast("tool.state_changed", after=start, where=lambda p: p["state"]["type"] == "running")
    assert await _workers_become(w.rpc.proc.pid, present=True)
    loop = asyncio.get_running_loop()
    sent = loop.time()
    await w.rpc.response(w.rpc.send("session.cancel_run", {"session_id": w.sid}), within=1.0)
    assert loop.time() - sent < 1.0
    done = await w.rpc.broadcast("run.done", after=start, within=5.0)
    assert w.rpc.lines[done]["params"]["outcome"]["type"] == "canceled"
    assert await _workers_become(w.rpc.proc.pid, present=False)


async def _workers_become(engine_pid: int, *, present: bool) -> bool:
    """Wait (bounded) until the engine has search workers (or has none); says whether that happened in time."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5.0
    while bool(_workers(engine_pid)) != present:
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def _workers(engine_pid: int) -> list[int]:
    """Live search workers whose parent is the engine."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if parent == engine_pid and b"search_worker" in cmdline:
            found.append(int(entry.name))
    return found

"""`omniagent chat` on a real terminal (a pty) with our engine against the fake LLM: two turns, a permission asked
inline, a line queued while a turn runs, Ctrl-C cancelling the turn, /model, /usage, leaving, and `--resume` in a
new process remembering the first turn. Every wait is bounded by a marker on the screen."""

from __future__ import annotations

import json
import os
from pathlib import Path

from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.pty_terminal import CTRL_C, CTRL_D, Terminal
from tests.runtime.adapters.engine.harness import KEY, child_env, workspace

SLOW = 600.0  # seconds the fake LLM holds the turn that Ctrl-C cancels (the server's stop ends it at once)


def _env(tmp_path: Path, llm: FakeLLMServer) -> dict[str, str]:
    return child_env(tmp_path, llm) | {"OMNIAGENT_STATE_DIR": str(tmp_path / "state")}


def test_chat_runs_turns_asks_inline_queues_cancels_switches_model_and_resumes(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    scenario = Scenario(
        [
            Reply(tool_calls=(FakeToolCall("write", {"path": "hello.txt", "content": "hello\n"}),)),
            Reply(text="First answer."),
            Reply(text="never shown", delay=SLOW),
            Reply(text="Queued answer."),
            Reply(text="Resumed answer."),
        ]
    )
    with FakeLLMServer(scenario) as llm:
        env = _env(tmp_path, llm)
        with Terminal("chat", cwd=ws, env=env) as chat:
            chat.expect("omniagent>")
            chat.line("write hello.txt")
            chat.expect("Allow Write hello.txt")
            menu = chat.expect("deny once")
            assert "allow once" in menu
            assert not (ws / "hello.txt").exists()
            chat.line("y")
            chat.expect("First answer.")
            assert (ws / "hello.txt").read_text() == "hello\n"

            chat.line("take your time")
            llm.wait_for_requests(3)  # the slow turn's model call is in flight
            chat.line("and then this")
            chat.expect("queued")
            chat.type(CTRL_C)
            chat.expect("cancelling the turn")
            chat.expect("turn cancelled")
            chat.expect("Queued answer.")  # the queued line ran once the cancelled turn ended

            chat.line("/model")
            shown = chat.expect("choices:")
            assert "model: anthropic/claude-sonnet-4-5" in shown
            chat.line("/model anthropic/claude-haiku-4-5")
            chat.expect("model → anthropic/claude-haiku-4-5")
            chat.line("/usage")
            chat.expect("context:")
            chat.expect("plan:")
            # The editor drew its prompt after the command's output: it reads keys again (raw mode), so Ctrl-D is a
            # key, not the line discipline's EOF. Output alone can come before the editor is back.
            chat.expect("omniagent>")
            chat.type(CTRL_D)
            assert chat.wait() == 0
            screen = chat.screen
        assert "never shown" not in screen
        assert KEY not in screen

        with Terminal("chat", "--resume", cwd=ws, env=env) as again:
            again.expect("resuming")
            again.line("what did you say first?")
            again.expect("Resumed answer.")
            again.line("/quit")
            assert again.wait() == 0
        last = llm.requests[-1].body
        assert isinstance(last, dict) and last["model"] == "claude-haiku-4-5"  # /model took, and was kept
        assert "First answer." in json.dumps(last) and "what did you say first?" in json.dumps(last)

    records = json.loads((tmp_path / "state" / "chat-sessions.json").read_text())["sessions"]
    assert [record["agent"] for record in records] == ["omniagent"]
    assert oct((tmp_path / "state" / "chat-sessions.json").stat().st_mode & 0o777) == "0o600"


def test_chat_outside_a_terminal_is_a_usage_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "omniagent", "chat"],
        cwd=workspace(tmp_path),
        env=child_env(tmp_path, None),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert out.returncode == 2
    assert "chat needs a terminal" in out.stderr and "omniagent run" in out.stderr
    assert "Traceback" not in out.stderr


def test_sessions_lists_what_chat_can_resume(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = child_env(tmp_path, None) | {"OMNIAGENT_STATE_DIR": str(tmp_path / "state")}
    ws = workspace(tmp_path)
    empty = subprocess.run(
        [sys.executable, "-m", "omniagent", "sessions"], cwd=ws, env=env, capture_output=True, text=True, timeout=20
    )
    assert empty.returncode == 0 and "no chat sessions to resume" in empty.stderr
    state = tmp_path / "state"
    state.mkdir()
    record = {"agent": "qwen", "directory": os.fspath(ws), "resume_token": "t1", "title": "Fix it", "updated": 1.0}
    (state / "chat-sessions.json").write_text(json.dumps({"sessions": [record]}))
    listed = subprocess.run(
        [sys.executable, "-m", "omniagent", "sessions", "--json"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert json.loads(listed.stdout) == [record]


async def test_chat_drives_a_real_acp_agent_through_a_permission(tmp_path: Path) -> None:
    """`chat --agent codex-acp` (the pinned real CLI, in the loopback-only namespace, against the fake LLM): the
    agent's shell command is asked inline, allowed once, runs, and the turn's answer is shown."""
    from tests.e2e.agents.harness import agent_world, tool_scenario

    async with agent_world("codex-acp", tmp_path, tool_scenario("codex-acp")) as world:
        env = world.runtime_env | {"OMNIAGENT_STATE_DIR": str(tmp_path / "state")}
        with Terminal("chat", "--agent", "codex-acp", cwd=world.work, env=env) as chat:
            chat.expect("codex-acp>", timeout=60)
            chat.line("make the file")
            chat.expect("Allow touch", timeout=60)
            chat.expect("allow once")  # the menu (drawn above the editor, whose prompt now reads "choice […]")
            chat.line("y")
            chat.expect("tool done", timeout=60)
            assert world.touched.exists()
            chat.line("/quit")
            assert chat.wait() == 0


def test_resuming_a_chat_whose_agent_is_gone_says_so_and_exits_3(tmp_path: Path) -> None:
    """Issue 26's closing note (noticed): the last chat here was with an agent no longer installed; `chat --resume`
    says which and how to install it, and exits 3 (no agent), never "internal error"."""
    ws = workspace(tmp_path)
    state = tmp_path / "state"
    state.mkdir()
    record = {"agent": "claude", "directory": str(ws), "resume_token": "t-1", "title": "old", "updated": 1.0}
    (state / "chat-sessions.json").write_text(json.dumps({"sessions": [record]}))
    with FakeLLMServer(Scenario([])) as llm, Terminal("chat", "--resume", cwd=ws, env=_env(tmp_path, llm)) as chat:
        chat.expect("Claude Code is not installed")
        assert chat.wait() == 3
        screen = chat.screen
    assert "internal error" not in screen and "Traceback" not in screen

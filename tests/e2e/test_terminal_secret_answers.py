"""A secret asked by our engine (`ask_user` input with `secret`) and answered at a real terminal (a pty): `run` and
`chat` never show what is typed, `chat` keeps it out of its line history, and the answer still reaches the engine
(the turn goes on). Every wait is bounded by a marker on the screen."""

from __future__ import annotations

import json
from pathlib import Path

from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.pty_terminal import CTRL_D, Terminal
from tests.runtime.adapters.engine.harness import child_env, workspace

SECRET = "hunter2-never-on-screen"


def _scenario() -> Scenario:
    ask = {"kind": "input", "question": "Your API token?", "secret": True}
    return Scenario([Reply(tool_calls=(FakeToolCall("ask_user", ask, "call_ask"),)), Reply(text="Thanks, noted.")])


def _env(tmp_path: Path, llm: FakeLLMServer) -> dict[str, str]:
    return child_env(tmp_path, llm) | {"OMNIAGENT_STATE_DIR": str(tmp_path / "state")}


def _answered(llm: FakeLLMServer) -> bool:
    """Whether the model's second request carries the ask_user result (the secret itself never goes to a model)."""
    last = json.dumps(llm.requests[-1].body)
    return len(llm.requests) == 2 and "call_ask" in last and SECRET not in last


def test_run_reads_a_secret_answer_without_echoing_it(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    with FakeLLMServer(_scenario()) as llm:
        with Terminal("run", "--agent", "omniagent", "set up the token", cwd=ws, env=_env(tmp_path, llm)) as run:
            run.expect("Secret: Your API token?")
            run.expect("answer: ")  # echo is off before this prompt shows
            run.line(SECRET)
            run.expect("Thanks, noted.")
            assert run.wait() == 0
            screen = run.screen
        assert _answered(llm)
    assert SECRET not in screen


def test_chat_masks_a_secret_answer_and_keeps_it_out_of_the_history(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    with FakeLLMServer(_scenario()) as llm:
        with Terminal("chat", "--agent", "omniagent", cwd=ws, env=_env(tmp_path, llm)) as chat:
            chat.expect("omniagent>")
            chat.line("set up the token")
            chat.expect("Secret: Your API token?")
            chat.expect("answer:")  # the editor masks from the moment it shows this prompt
            chat.line(SECRET)
            chat.expect("Thanks, noted.")
            chat.expect("omniagent>")
            chat.type(CTRL_D)
            assert chat.wait() == 0
            screen = chat.screen
        assert _answered(llm)
    assert SECRET not in screen
    history = (tmp_path / "state" / "chat-history").read_text()
    assert "set up the token" in history and SECRET not in history

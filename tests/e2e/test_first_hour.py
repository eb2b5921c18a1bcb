"""A stranger's first hour, on a real terminal: every failure says what to do next, no traceback reaches a person,
and a local OpenAI-compatible server works with no key. Our engine against the fake LLM; bounded waits."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from omniagent.faces.cli.run import EXIT_NO_AGENT, EXIT_USAGE
from omniagent.testing import ErrorReply, FakeLLMServer, Reply, Scenario
from tests.pty_terminal import Terminal
from tests.runtime.adapters.engine.harness import KEY, child_env, workspace


def test_first_run_on_a_terminal_prints_the_three_ways_forward(tmp_path: Path) -> None:
    with Terminal("run", "hello", cwd=workspace(tmp_path), env=child_env(tmp_path, None)) as run:
        run.expect("Three ways forward")
        run.expect("npm install -g @anthropic-ai/claude-code")
        run.expect("export ANTHROPIC_API_KEY=")
        run.expect("OLLAMA_HOST=")
        assert run.wait() == EXIT_NO_AGENT
        assert "Traceback" not in run.screen


def test_a_rejected_key_says_which_variable_was_rejected_and_where_to_get_a_new_one(tmp_path: Path) -> None:
    scenario = Scenario([ErrorReply(401, "authentication_error", "", "invalid x-api-key")])
    with (
        FakeLLMServer(scenario) as llm,
        Terminal("run", "hello", cwd=workspace(tmp_path), env=child_env(tmp_path, llm)) as run,
    ):
        run.expect("rejected ANTHROPIC_API_KEY (HTTP 401)")
        run.expect("https://console.anthropic.com/settings/keys")
        assert run.wait() == EXIT_NO_AGENT
        screen = run.screen
    assert "needs a login" not in screen and "Traceback" not in screen and KEY not in screen


def test_a_deleted_working_directory_is_a_sentence_not_a_traceback(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    env = child_env(tmp_path, None)
    # The shell's directory is removed under it: the child starts in a directory that no longer exists.
    script = f"import os, sys; os.chdir({str(gone)!r}); os.rmdir({str(gone)!r}); "
    script += "sys.argv = ['omniagent', 'run', 'hello']; from omniagent.faces.cli.main import main; sys.exit(main())"
    with Terminal("-c", script, cwd=tmp_path, env=env, module=False) as run:
        run.expect("does not exist")
        assert run.wait() == EXIT_USAGE
        assert "Traceback" not in run.screen and "cd to a directory or pass -C DIR" in run.screen


def test_cwd_option_works_elsewhere_and_a_missing_one_is_a_usage_error(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    with FakeLLMServer(Scenario([Reply(text="from elsewhere")])) as llm:
        env = child_env(tmp_path, llm)
        done = subprocess.run(
            [sys.executable, "-m", "omniagent", "run", "-C", str(ws), "hi"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        assert "from elsewhere" in done.stdout
        assert str(ws) in str(llm.requests[-1].body)  # the engine worked in -C's directory
    missing = subprocess.run(
        [sys.executable, "-m", "omniagent", "run", "-C", str(tmp_path / "nope"), "hi"],
        cwd=tmp_path,
        env=child_env(tmp_path, None),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert missing.returncode == EXIT_USAGE and "does not exist" in missing.stderr


def test_a_local_openai_compatible_server_needs_no_key(tmp_path: Path) -> None:
    """docs/providers.md: `OLLAMA_HOST` (or providers.json) points the keyless `ollama` provider at a local server;
    `-m ollama/NAME` takes any model the server names, no providers.json entry needed."""
    with FakeLLMServer(Scenario([Reply(text="local hello")])) as llm:
        host = llm.url.split("//", 1)[1].split("/", 1)[0]
        env = child_env(tmp_path, None) | {"OLLAMA_HOST": host}
        done = subprocess.run(
            [sys.executable, "-m", "omniagent", "run", "-m", "ollama/qwen3:8b", "hi"],
            cwd=workspace(tmp_path),
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        assert "local hello" in done.stdout
        assert "omniagent: using our engine with ollama/qwen3:8b (ollama needs no key)\n" in done.stderr
        request = llm.requests[-1]
        assert request.path == "/v1/chat/completions"
        assert isinstance(request.body, dict) and request.body["model"] == "qwen3:8b"
        assert "authorization" not in request.headers


def test_the_readme_python_example_catches_omniagent_error_when_the_agent_is_missing(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    example = readme.split("```python\n", 1)[1].split("```", 1)[0]
    assert "except omniagent.OmniagentError" in example
    env = child_env(tmp_path, None)
    done = subprocess.run(
        [sys.executable, "-c", example], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert "agent not installed: qwen" in done.stdout + done.stderr
    assert "npm install -g @qwen-code/qwen-code" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_an_unreachable_provider_names_the_url_it_tried(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on: bound, never listened to, then closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = child_env(tmp_path, None) | {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}"}
    with Terminal("run", "hello", cwd=workspace(tmp_path), env=env | {"OMNIAGENT_RETRY_SCALE": "0.001"}) as run:
        run.expect("Could not connect to the provider")
        run.expect(f"http://127.0.0.1:{port}/v1/messages")
        assert run.wait() == 1
        assert "Traceback" not in run.screen and KEY not in run.screen


def test_an_internal_error_is_one_sentence_and_debug_shows_the_traceback(tmp_path: Path) -> None:
    """A failure nobody planned for (here: the state dir is a file, so chat cannot keep its history) reaches a
    person as one sentence naming --debug; with --debug the traceback is shown."""
    blocker = tmp_path / "state"
    blocker.write_text("not a directory")
    with FakeLLMServer(Scenario([Reply(text="hi")])) as llm:
        env = child_env(tmp_path, llm) | {"OMNIAGENT_STATE_DIR": str(blocker)}
        with Terminal("chat", cwd=workspace(tmp_path), env=env) as chat:
            chat.expect("internal error")
            assert chat.wait() == 1
            assert "--debug" in chat.screen and "Traceback" not in chat.screen
        with Terminal("--debug", "chat", cwd=workspace(tmp_path), env=env) as chat:
            chat.expect("Traceback")
            assert chat.wait() == 1

"""`omniagent run` with our engine: the real CLI as a subprocess whose only credential is `ANTHROPIC_API_KEY`, pointed
at the fake LLM by `ANTHROPIC_BASE_URL`, with a HOME and data dir of the test's own and no agent CLI on PATH. The
terminal prompt is answered through a pseudo-terminal; waits are bounded."""

from __future__ import annotations

import fcntl
import json
import os
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from omniagent.faces.cli.run import EXIT_NO_AGENT, choose_agent
from omniagent.protocols.sidecar.agents import AgentInstallation, DiscoveryReport, InstallationSource
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.runtime.adapters.engine.harness import KEY, child_env, tool_then_text, workspace
from tests.sidecar_schema import validate
from tests.test_run_command import _read_until as read_pty_until

WAIT = 20.0  # seconds: the bound on any one wait for the CLI
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _run(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "omniagent", "run", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )


def test_run_on_a_terminal_picks_the_ready_engine_asks_permission_and_completes(tmp_path: Path) -> None:
    """Issue "One system" part 3 acceptance: with only ANTHROPIC_API_KEY set (base URL at the fake LLM), `run`
    picks the engine, says so, completes a turn with a tool call, asking permission on the TTY; exit 0."""
    ws = workspace(tmp_path)
    with FakeLLMServer(tool_then_text()) as llm:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        env = child_env(tmp_path, llm) | {"TERM": "xterm-256color"}
        process = subprocess.Popen(
            [sys.executable, "-m", "omniagent", "run", "write hello.txt"],
            cwd=ws,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=subprocess.PIPE,
        )
        os.close(slave)
        try:
            prompt = _read_until(master, b"choice [")
            assert "allow once" in prompt and "allow always" in prompt and "deny once" in prompt
            assert not (ws / "hello.txt").exists()
            os.write(master, b"y\n")
            rest = _read_until(master, b"\0never\0")
            assert process.wait(timeout=WAIT) == 0
            assert process.stderr is not None
            notes = process.stderr.read().decode()
        finally:
            process.kill()
            process.wait()
            os.close(master)
    # Issue 26: which engine, which model (the first ready provider's first), and why; never the key's value.
    assert "omniagent: using our engine with anthropic/claude-sonnet-4-5 (ANTHROPIC_API_KEY is set)\n" in notes
    assert "All done." in rest and "Write hello.txt" in prompt + rest
    assert (ws / "hello.txt").read_text() == "hello\n"
    assert KEY not in prompt + rest + notes


def test_run_without_a_terminal_denies_the_write_and_the_turn_still_completes(tmp_path: Path) -> None:
    """docs/run.md: no terminal → permissions are denied (deny once) and said on stderr; the engine tells the model
    and the turn completes (exit 0)."""
    ws = workspace(tmp_path)
    with FakeLLMServer(tool_then_text(text="Fine, I will not.")) as llm:
        out = _run("write hello.txt", cwd=ws, env=child_env(tmp_path, llm))
    assert out.returncode == 0, out.stderr
    assert "denied" in out.stderr and "Fine, I will not." in out.stdout
    assert not (ws / "hello.txt").exists()


def test_run_json_yes_prints_schema_valid_events_and_runs_the_tool(tmp_path: Path) -> None:
    """docs/run.md: `--yes` approves every permission unasked; `--json` prints only events, the last TurnEnded."""
    ws = workspace(tmp_path)
    with FakeLLMServer(tool_then_text()) as llm:
        out = _run("--yes", "--json", "write hello.txt", cwd=ws, env=child_env(tmp_path, llm))
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    for event in events:
        validate("Event", event)
    kinds = [next(iter(event["kind"])) if isinstance(event["kind"], dict) else event["kind"] for event in events]
    assert "RequestOpened" not in kinds and "ToolUpdated" in kinds and kinds[-1] == "TurnEnded"
    assert events[-1]["kind"]["TurnEnded"]["stop"] == {"Completed": {"source": "Protocol"}}
    assert (ws / "hello.txt").read_text() == "hello\n"


def test_a_turn_stopped_at_a_limit_says_which_and_only_a_turn_out_of_requests_exits_1(tmp_path: Path) -> None:
    """Issue 33, docs/run.md: a reply cut at the model's output limit completed (exit 0), a turn out of model
    requests (OMNIAGENT_MAX_ROUNDS) left its work undone (exit 1, as when it was a failed turn); stderr says which
    limit, and neither is called a failure."""
    ws = workspace(tmp_path)
    rounds = Reply(tool_calls=(FakeToolCall("read", {"path": "missing.txt"}),), match="ROUNDS")
    with FakeLLMServer(Scenario([rounds, Reply(text="cut", stop="length", match="LENGTH")])) as llm:
        env = child_env(tmp_path, llm) | {"OMNIAGENT_MAX_ROUNDS": "1"}
        cut = _run("LENGTH", cwd=ws, env=env)
        out_of_rounds = _run("ROUNDS", cwd=ws, env=env)
    assert cut.returncode == 0, cut.stderr
    assert "the turn stopped at the model's output token limit" in cut.stderr and "cut" in cut.stdout
    assert out_of_rounds.returncode == 1, out_of_rounds.stderr
    assert "the turn stopped at its limit of model requests" in out_of_rounds.stderr
    assert "failed" not in cut.stderr + out_of_rounds.stderr


def test_run_without_any_key_or_other_agent_shows_the_three_ways_forward(tmp_path: Path) -> None:
    """A first run (no agent CLI, no key): the engine is the only agent, and instead of a bare login error `run`
    prints the three ways forward — install an agent CLI (with the commands), set a key (with where to get one),
    or point at a local OpenAI-compatible server — and exits 3 (docs/cli.md)."""
    out = _run("hi", cwd=workspace(tmp_path), env=child_env(tmp_path, None))
    assert out.returncode == EXIT_NO_AGENT, out.stderr
    assert "omniagent: using" not in out.stderr  # issue 26: nothing usable, so no pick to announce
    assert "Three ways forward" in out.stderr
    assert "npm install -g @anthropic-ai/claude-code" in out.stderr and "omniagent agents" in out.stderr
    assert "export ANTHROPIC_API_KEY=" in out.stderr and "https://console.anthropic.com/settings/keys" in out.stderr
    assert "OLLAMA_HOST=" in out.stderr and "omniagent run -m ollama/" in out.stderr
    assert "Traceback" not in out.stderr


def test_choose_agent_prefers_a_ready_engine_else_the_first_other_drivable_agent() -> None:
    """Issue: without `--agent`, `run` prefers a ready engine (a provider with a credential), otherwise the first
    installed agent (that omniagent can drive); the engine only when nothing else can run."""
    engine, qwen, pi = (
        AgentInstallation(id=name, name=name, executable_path=f"/bin/{name}", source=InstallationSource.PATH)
        for name in ("omniagent", "qwen", "pi")
    )
    report = DiscoveryReport(agents=[engine, pi, qwen], missing=[], diagnostics=[])
    drivable = lambda agent: agent.id != "pi"  # noqa: E731
    assert choose_agent(report, drivable, lambda: True) == engine
    assert choose_agent(report, drivable, lambda: False) == qwen
    only_engine = DiscoveryReport(agents=[engine, pi], missing=[], diagnostics=[])
    assert choose_agent(only_engine, drivable, lambda: False) == engine
    asked: list[bool] = []

    def ready() -> bool:
        asked.append(True)
        return True

    without_engine = DiscoveryReport(agents=[pi, qwen], missing=[], diagnostics=[])
    assert choose_agent(without_engine, drivable, ready) == qwen
    assert asked == []  # readiness (key files) is read only when the engine is there to pick


def _read_until(fd: int, marker: bytes) -> str:
    """Text from `fd` until `marker`, the end of the stream, or WAIT seconds (then the test fails); ANSI removed."""
    return _ANSI.sub("", read_pty_until(fd, marker, time.monotonic() + WAIT).decode(errors="replace"))


def test_run_shows_the_tail_of_a_commands_output_and_workspace_relative_diff_headers(tmp_path: Path) -> None:
    """docs/run.md: a command's output is shown under its tool line, the lines above the last five collapsed to a
    count; a diff's headers name the file relative to the workspace (`+++ b/hello.txt`, never `b//abs/path`)."""
    ws = workspace(tmp_path)
    lines = " ".join(f"line{n}" for n in range(1, 10))
    scenario = Scenario(
        [
            Reply(tool_calls=(FakeToolCall("exec", {"command": f"printf '%s\\n' {lines}"}),)),
            Reply(tool_calls=(FakeToolCall("write", {"path": "hello.txt", "content": "hello\n"}),)),
            Reply(text="All done."),
        ]
    )
    with FakeLLMServer(scenario) as llm:
        out = _run("--yes", "do it", cwd=ws, env=child_env(tmp_path, llm))
    assert out.returncode == 0, out.stderr
    # nine lines and the engine's "[exit code 0]": the last five are shown, the five above them counted
    assert "… 5 more lines" in out.stdout
    assert "    line6" in out.stdout and "    line9" in out.stdout and "    line5" not in out.stdout
    assert "+++ b/hello.txt" in out.stdout and str(ws) not in out.stdout.split("+++", 1)[1].splitlines()[0]


def test_a_ready_engine_is_picked_without_discovering_the_other_agents(tmp_path: Path) -> None:
    """The ready engine is the pick whatever else is installed (docs/run.md), so `run` looks for nothing else: no
    login shell is started (a slow rc file would delay every run). Without a key it looks, and the shell runs."""
    ws = workspace(tmp_path)
    marker = tmp_path / "login-shell-ran"
    shell = tmp_path / "shell"
    shell.write_text(f'#!/bin/sh\ntouch {marker}\nexec /bin/sh "$@"\n')
    shell.chmod(0o755)

    def env(llm: FakeLLMServer | None) -> dict[str, str]:
        base = {k: v for k, v in child_env(tmp_path, llm).items() if k != "OMNIAGENT_NO_LOGIN_SHELL"}
        return base | {"SHELL": str(shell)}

    with FakeLLMServer(Scenario([Reply(text="Hello.")])) as llm:
        out = _run("--yes", "say hello", cwd=ws, env=env(llm))
    assert out.returncode == 0, out.stderr
    assert "(ANTHROPIC_API_KEY is set)" in out.stderr and not marker.exists()
    out = _run("say hello", cwd=ws, env=env(None))
    assert out.returncode == EXIT_NO_AGENT and marker.exists()  # the probe sees a shell when one runs

"""`omniagent run`: the real CLI as a subprocess, driving scripted agents (`--mock`), seen through its stdout,
stderr, exit code and, for the terminal prompts, a pseudo-terminal."""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from omniagent.faces.cli.run import EXIT_INTERRUPTED, EXIT_NO_AGENT, EXIT_TURN_FAILED, EXIT_USAGE, choose_agent
from omniagent.protocols.sidecar.agents import AgentInstallation, DiscoveryReport, InstallationSource
from tests.sidecar_schema import validate

SCRIPTS = Path(__file__).parent / "fixtures" / "mock-scripts"
# Bound on any one wait for the CLI (it answers in well under a second; this only stops a hang).
WAIT = 20.0
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "omniagent", "run", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )


def _script(name: str) -> str:
    return str(SCRIPTS / f"{name}.json")


def test_completed_turn_prints_text_reasoning_tools_diff_and_plan_and_exits_0(tmp_path: Path) -> None:
    """Issue (ACP client, part 7): streamed text, reasoning, tool calls with status and diffs, the plan; exit 0."""
    out = _run("--mock", _script("run-hello"), "say hello", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[-1] == "Hello, world!"
    assert "The user wants a greeting." in lines
    for status in ("pending", "running", "completed"):
        assert f"Write hello.txt  {status}" in "\n".join(lines)
    assert [line for line in lines if line in ("    -hi", "    +hello")] == ["    -hi", "    +hello"]
    assert "  [x] write hello.txt" in lines and "  [~] say hello" in lines
    # no --agent: the pick is announced, on stderr
    assert "omniagent: using Mock (the agent the --mock script plays)\n" in out.stderr


def test_failed_turn_exits_1_with_the_reason_on_stderr(tmp_path: Path) -> None:
    """Issue: non-zero exit with the reason when the turn does not complete."""
    out = _run("--mock", _script("run-failed"), "hi", cwd=tmp_path)
    assert out.returncode == EXIT_TURN_FAILED
    assert "Trying." in out.stdout
    assert "model overloaded" in out.stderr


def test_refused_turn_exits_1(tmp_path: Path) -> None:
    """Issue: a Refused stop is a failure of the run, said on stderr."""
    out = _run("--mock", _script("run-refused"), "hi", cwd=tmp_path)
    assert out.returncode == EXIT_TURN_FAILED
    assert "refused" in out.stderr


def test_agent_dying_mid_turn_exits_1_naming_the_exit(tmp_path: Path) -> None:
    """Our choice: the agent's death is a failed turn, reported with the agent's exit status and stderr."""
    out = _run("--mock", "die", "hi", cwd=tmp_path)
    assert out.returncode == EXIT_TURN_FAILED
    assert "mock died" in out.stderr


def test_json_prints_only_schema_valid_event_lines_ending_with_the_turn(tmp_path: Path) -> None:
    """Issue: `--json` prints the event lines instead; our choice: nothing else on stdout, notes on stderr."""
    out = _run("--json", "--yes", "--mock", _script("run-hello"), "say hello", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    for event in events:
        validate("Event", event)
    assert [event["sequence"] for event in events] == list(range(1, len(events) + 1))
    assert events[0]["kind"] == {"TurnStarted": {"origin": {"Prompt": "p1"}}}
    assert events[-1]["kind"]["TurnEnded"]["stop"] == {"Completed": {"source": "Protocol"}}
    assert "omniagent: using Mock (the agent the --mock script plays)\n" in out.stderr


def test_permission_without_a_terminal_is_denied_and_the_turn_goes_on(tmp_path: Path) -> None:
    """Issue: deny when not a TTY (DenyOnce offered here), and say so."""
    out = _run("--json", "--mock", "turn", "run the tests", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    kinds = [next(iter(json.loads(line)["kind"])) for line in out.stdout.splitlines()]
    assert kinds.index("RequestOpened") < kinds.index("RequestClosed") < kinds.index("TurnEnded")
    texts = [json.loads(line)["kind"].get("TextDelta", {}).get("text") for line in out.stdout.splitlines()]
    assert texts.index("Done.") > kinds.index("RequestClosed")  # the script went on only once answered
    assert "denied `cargo test` (deny once)" in out.stderr


def test_yes_approves_permissions_without_asking(tmp_path: Path) -> None:
    """Issue: `--yes` opens with AutoApprove, so the permission never reaches the person."""
    out = _run("--yes", "--json", "--mock", "turn", "run the tests", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    kinds = [next(iter(json.loads(line)["kind"])) for line in out.stdout.splitlines()]
    assert "RequestOpened" not in kinds
    assert kinds[-1] == "TurnEnded"
    assert "denied" not in out.stderr


def test_question_without_a_terminal_cancels_the_turn_and_exits_1(tmp_path: Path) -> None:
    """Issue: questions without a TTY cancel the turn with a clear message."""
    out = _run("--mock", _script("run-question"), "hi", cwd=tmp_path)
    assert out.returncode == EXIT_TURN_FAILED
    assert "no terminal to answer it" in out.stderr
    assert "cancelled" in out.stderr
    assert "Answered." not in out.stdout


def test_unknown_agent_exits_3_naming_it(tmp_path: Path) -> None:
    """Issue: no agent available is its own exit code (3), with a message."""
    out = _run("--agent", "nosuch", "--mock", "turn", "hi", cwd=tmp_path)
    assert out.returncode == EXIT_NO_AGENT
    assert "unknown agent `nosuch`" in out.stderr
    assert out.stdout == ""


def test_lost_login_exits_3_with_the_login_method(tmp_path: Path) -> None:
    """Issue: AuthRequired exits 3 and prints how to log in."""
    out = _run("--mock", _script("run-lose-auth"), "hi", cwd=tmp_path)
    assert out.returncode == EXIT_NO_AGENT
    assert "set ANTHROPIC_API_KEY" in out.stderr


def test_empty_prompt_and_unreadable_mock_script_are_usage_errors(tmp_path: Path) -> None:
    """Our choice: bad input exits 2 (argparse's code) before any agent starts."""
    assert _run("--mock", "turn", "  ", cwd=tmp_path).returncode == EXIT_USAGE
    out = _run("--mock", str(tmp_path / "missing.json"), "hi", cwd=tmp_path)
    assert out.returncode == EXIT_USAGE
    assert "no mock script" in out.stderr


def test_help_does_not_show_the_mock_option(tmp_path: Path) -> None:
    """Brief: `--mock` is a testing aid, hidden from `--help`."""
    out = _run("--help", cwd=tmp_path)
    assert out.returncode == 0
    assert "--agent" in out.stdout and "--mock" not in out.stdout


def test_ctrl_c_cancels_a_streaming_turn_and_exits_130(tmp_path: Path) -> None:
    """Issue: text streams as it arrives; Ctrl-C cancels the turn, which ends, then the CLI exits 130."""
    process = subprocess.Popen(
        [sys.executable, "-m", "omniagent", "run", "--mock", _script("run-slow"), "hi"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        seen = _read_until(process.stdout.fileno(), b"Working on it")  # shown while the turn still runs
        assert b"Working on it" in seen
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=WAIT) == EXIT_INTERRUPTED
        assert process.stderr is not None
        assert b"interrupted" in process.stderr.read()
    finally:
        process.kill()
        process.wait()


def test_terminal_permission_prompt_lists_the_choices_and_answers_allow_once(tmp_path: Path) -> None:
    """Issue: on a TTY each permission is asked, listing the offered choices as words; `y` is AllowOnce."""
    with _Terminal("--mock", "turn", "run the tests", cwd=tmp_path) as terminal:
        prompt = terminal.read_until("choice [1-2, y/n]: ")
        assert "1) allow once  2) deny once" in prompt
        terminal.write("y\n")
        rest = terminal.read_to_end()
        assert terminal.wait() == 0
    assert "→ allow once" in rest
    assert "Done." in rest


def test_ctrl_c_at_a_permission_prompt_withdraws_it_cancels_the_turn_and_exits_130(tmp_path: Path) -> None:
    """Issue: Ctrl-C during the turn cancels it, even while a person is being asked (the prompt must not hang)."""
    with _Terminal("--mock", "turn", "run the tests", cwd=tmp_path) as terminal:
        terminal.read_until("choice [1-2, y/n]: ")
        terminal.process.send_signal(signal.SIGINT)
        rest = terminal.read_to_end()
        assert terminal.wait() == EXIT_INTERRUPTED
    assert "Done." not in rest


def test_terminal_question_is_answered_with_the_picked_choice(tmp_path: Path) -> None:
    """Issue: on a TTY a question lists its choices; a number picks one and the turn goes on."""
    with _Terminal("--mock", _script("run-question"), "hi", cwd=tmp_path) as terminal:
        prompt = terminal.read_until("choice [1-2]: ")
        assert "Language: Which language?" in prompt and "2) Rust" in prompt
        terminal.write("7\n")  # not a choice: asked again
        terminal.read_until("choice [1-2]: ")
        terminal.write("2\n")
        rest = terminal.read_to_end()
        assert terminal.wait() == 0
    assert "Answered." in rest


def test_choose_agent_takes_the_first_drivable_agent_in_discovery_order() -> None:
    """Issue: without `--agent`, the first ready agent (one omniagent has an adapter for)."""
    agents = [
        AgentInstallation(id=name, name=name, executable_path=f"/bin/{name}", source=InstallationSource.PATH)
        for name in ("claude", "gemini", "qwen")
    ]
    report = DiscoveryReport(agents=agents, missing=[], diagnostics=[])
    assert choose_agent(report, lambda agent: agent.id != "claude") == agents[1]
    assert choose_agent(report, lambda agent: False) is None


# --- helpers -----------------------------------------------------------------------------------------------


def _read_until(fd: int, marker: bytes, deadline: float | None = None) -> bytes:
    """Bytes from `fd` until `marker` shows up, the end of the stream, or WAIT seconds (then the test fails)."""
    deadline = deadline or time.monotonic() + WAIT
    seen = b""
    while marker not in seen:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"timed out waiting for {marker!r}; saw {seen!r}"
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the pty's other side closed
            chunk = b""
        if not chunk:
            break
        seen += chunk
    return seen


class _Terminal:
    """The CLI with stdin and stdout on a pseudo-terminal (stderr piped), read with bounded waits."""

    def __init__(self, *args: str, cwd: Path) -> None:
        self._args = args
        self._cwd = cwd

    def __enter__(self) -> _Terminal:
        self._master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "omniagent", "run", *self._args],
            cwd=self._cwd,
            stdin=slave,
            stdout=slave,
            stderr=subprocess.PIPE,
            env={**os.environ, "TERM": "xterm-256color"},
        )
        os.close(slave)
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.kill()
        self.process.wait()
        os.close(self._master)

    def read_until(self, marker: str) -> str:
        seen = _read_until(self._master, marker.encode())
        text = _ANSI.sub("", seen.decode(errors="replace"))
        assert marker in text, text
        return text

    def read_to_end(self) -> str:
        return _ANSI.sub("", _read_until(self._master, b"\0never\0").decode(errors="replace"))

    def write(self, text: str) -> None:
        os.write(self._master, text.encode())

    def wait(self) -> int:
        return self.process.wait(timeout=WAIT)


def test_a_model_the_agent_cannot_take_says_so_and_exits_1(tmp_path: Path) -> None:
    """docs/cli.md: `-m` goes to the agent's `model` option; an agent without one refuses, and `run` says the flag
    was not taken and what to do."""
    out = _run("--mock", _script("run-hello"), "-m", "gpt-9", "hi", cwd=tmp_path)
    assert out.returncode == 1
    assert "did not take `-m gpt-9`" in out.stderr and "omit -m" in out.stderr
    assert "Traceback" not in out.stderr

"""An `omniagent` subprocess on a real pseudo-terminal (stdin, stdout and stderr), read with bounded waits.

For the interactive commands (`chat`, and `run`'s prompts): the test types keys and waits for text to show up,
with ANSI sequences stripped. prompt_toolkit's cursor-position request is switched off (PROMPT_TOOLKIT_NO_CPR), as
a terminal emulator that never answers it would otherwise delay the first prompt.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

WAIT = 20.0  # seconds: the bound on any one wait
ANSI = re.compile(r"\x1b(?:\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])")
ENTER, CTRL_C, CTRL_D = "\r", "\x03", "\x04"


class Terminal:
    """`omniagent ARGS…` with a pty for its terminal. Everything it printed so far is in `screen`."""

    def __init__(self, *args: str, cwd: Path, env: dict[str, str], module: bool = True) -> None:
        # `module=False` runs `python ARGS…` as given (e.g. `-c` with a script), not `python -m omniagent ARGS…`.
        self._args = ("-m", "omniagent", *args) if module else args
        self._cwd = cwd
        self._env = env | {"TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "120"}
        self.screen = ""
        self._raw = b""
        self._seen_upto = 0

    def __enter__(self) -> Terminal:
        self._master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.process = subprocess.Popen(
            [sys.executable, *self._args],
            cwd=self._cwd,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=self._env,
            preexec_fn=_control_terminal,
        )
        os.close(slave)
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.kill()
        self.process.wait()
        os.close(self._master)

    def expect(self, marker: str, *, timeout: float = WAIT) -> str:
        """Wait until `marker` appears after the previous match; returns the text up to and including it."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.screen.find(marker, self._seen_upto)
            if found >= 0:
                chunk = self.screen[self._seen_upto : found + len(marker)]
                self._seen_upto = found + len(marker)
                return chunk
            remaining = deadline - time.monotonic()
            assert remaining > 0, (
                f"timed out waiting for {marker!r}; the screen since the last match:\n"
                + (self.screen[self._seen_upto :])
            )
            if not self._read(remaining):
                raise AssertionError(f"the terminal closed before {marker!r}:\n{self.screen[self._seen_upto :]}")

    def type(self, text: str) -> None:
        os.write(self._master, text.encode())

    def line(self, text: str) -> None:
        """Type a line and press Enter."""
        self.type(text + ENTER)

    def wait(self) -> int:
        """The exit code, reading what is left so the process never blocks on a full pty."""
        deadline = time.monotonic() + WAIT
        while self.process.poll() is None:
            assert time.monotonic() < deadline, f"the process did not exit; the screen:\n{self.screen[-2000:]}"
            self._read(0.2)
        while self._read(0.05):
            pass
        return self.process.wait()

    def _read(self, within: float) -> bool:
        ready, _, _ = select.select([self._master], [], [], within)
        if not ready:
            return True
        try:
            chunk = os.read(self._master, 65536)
        except OSError:  # EIO: the other side closed
            return False
        if not chunk:
            return False
        self._raw += chunk  # stripped whole: an escape sequence may be split across reads
        self.screen = ANSI.sub("", self._raw.decode(errors="replace")).replace("\r", "")
        return True


def _control_terminal() -> None:
    """In the child: a session of its own with the pty as its controlling terminal, as a shell gives it, so a Ctrl-C
    typed while the terminal is in cooked mode raises SIGINT in it (and in no other process)."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)

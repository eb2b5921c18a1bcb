"""How `omniagent run` shows a turn: for a person (styled by `rich` on a terminal), or as event JSON lines (`--json`).

A renderer only draws; it never answers a request or decides when the turn is over (that is `run.py`).
Stdout carries the turn; notes about the run (which agent, a denied permission, a diagnostic) go to stderr.

Drawing goes through a `Screen`: on a terminal a `RichScreen` (colours, via rich); anywhere else a `PlainScreen`,
which writes the same characters rich would (no styles, rich's control-character and tab rules) without importing
rich, so `omniagent run` into a pipe or a file starts faster (docs/performance.md).
"""

from __future__ import annotations

import difflib
import os
import sys
from typing import IO, TYPE_CHECKING, Protocol

from omniagent.protocols.sidecar.events import (
    CommandInput,
    ContextCompacted,
    DiagnosticEvent,
    Event,
    Execute,
    FileDiff,
    MessageEnded,
    PathInput,
    PatternInput,
    PlanEntry,
    PlanStatus,
    PlanUpdated,
    QueryInput,
    ReasoningDelta,
    TextDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
    UrlInput,
)

if TYPE_CHECKING:
    from rich.console import Console

# Lines of a tool's output shown under it once it settles: the tail holds the result (or the error); the lines
# above it are collapsed to a count. A command's output is shown always, other tools' only when they failed.
FAILED_OUTPUT_LINES = 8
COMMAND_OUTPUT_LINES = 5

_TOOL_STYLES = {
    ToolStatus.PENDING: ("○", "yellow"),
    ToolStatus.RUNNING: ("◐", "yellow"),
    ToolStatus.COMPLETED: ("●", "green"),
    ToolStatus.FAILED: ("✗", "red"),
    ToolStatus.CANCELLED: ("⊘", "dim"),
}
_PLAN_MARKS = {PlanStatus.PENDING: "[ ]", PlanStatus.IN_PROGRESS: "[~]", PlanStatus.COMPLETED: "[x]"}


class Renderer(Protocol):
    """Draws the events of one turn and the run's notes."""

    def event(self, event: Event) -> None:
        """Draw one event (called for every event read, in order)."""

    def note(self, message: str, *, style: str = "") -> None:
        """A sentence about the run itself, on stderr."""

    def finish(self) -> None:
        """The turn is over: end the current line."""

    def interrupted(self) -> None:
        """Ctrl-C was pressed: the terminal echoed `^C` where the cursor was; start a line of our own."""


# Variables with which rich treats any output as a terminal (or decides itself): then rich draws, as it always did.
_RICH_TERMINAL_VARIABLES = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
# Control characters rich drops from text (bell, backspace, vertical tab, form feed, carriage return).
_RICH_DROPS = str.maketrans(dict.fromkeys((7, 8, 11, 12, 13)))
TAB_SIZE = 8  # rich's tab stops


class Styled:
    """Text in pieces, each with a rich style name ("" for none): what renderers and askers draw."""

    __slots__ = ("pieces",)

    def __init__(self, text: str = "", style: str = "") -> None:
        self.pieces: list[tuple[str, str]] = [(text, style)] if text else []

    @classmethod
    def assemble(cls, *pieces: tuple[str, str] | str) -> Styled:
        """Pieces given as `(text, style)` or as unstyled text."""
        styled = cls()
        for piece in pieces:
            styled.append(*((piece, "") if isinstance(piece, str) else piece))
        return styled

    def append(self, text: str, style: str = "") -> Styled:
        self.pieces.append((text, style))
        return self

    @property
    def plain(self) -> str:
        return "".join(text for text, _ in self.pieces)


class Screen(Protocol):
    """Where styled text is drawn: stdout or stderr, a terminal or not."""

    @property
    def is_terminal(self) -> bool: ...

    def print(self, text: Styled | None = None, *, end: str = "\n") -> None:
        """Draw `text` (nothing: an empty line), then `end`."""


class RichScreen:
    """A rich `Console`: styles as colours on a terminal."""

    def __init__(self, console: Console) -> None:
        self.console = console

    @property
    def is_terminal(self) -> bool:
        return self.console.is_terminal

    def print(self, text: Styled | None = None, *, end: str = "\n") -> None:
        from rich.text import Text

        if text is None:
            self.console.print(end=end)
        else:
            self.console.print(Text.assemble(*text.pieces), end=end)


class PlainScreen:
    """A file that is not a terminal: the characters rich would write there, without rich."""

    is_terminal = False

    def __init__(self, file: IO[str]) -> None:
        self._file = file

    def print(self, text: Styled | None = None, *, end: str = "\n") -> None:
        body = "" if text is None else text.plain.translate(_RICH_DROPS)
        self._file.write("\n".join(line.expandtabs(TAB_SIZE) for line in body.split("\n")) + end)
        self._file.flush()


def screen(file: IO[str]) -> Screen:
    """A `RichScreen` for a terminal (or when rich's own variables may make one of `file`), else a `PlainScreen`."""
    if file.isatty() or any(os.environ.get(name) for name in _RICH_TERMINAL_VARIABLES):
        from omniagent.faces.pipes import stdout_console

        # Not rich's own Console: its answer to a closed pipe (exit 1 at once) would skip the CLI's (faces/pipes.py).
        return RichScreen(stdout_console(file=file, highlight=False, soft_wrap=True))
    return PlainScreen(file)


def stderr_screen() -> Screen:
    """The screen notes and `--json` mode's questions are written to."""
    return screen(sys.stderr)


class JsonRenderer:
    """`--json`: each event as one compact line on stdout, flushed at once; notes on stderr."""

    def __init__(self, out: IO[bytes], notes: Screen) -> None:
        self._out = out
        self._notes = notes

    def event(self, event: Event) -> None:
        self._out.write(event.encode() + b"\n")
        self._out.flush()

    def note(self, message: str, *, style: str = "") -> None:
        self._notes.print(Styled(f"omniagent: {message}", style=style))

    def finish(self) -> None:
        return None

    def interrupted(self) -> None:
        if self._notes.is_terminal:
            self._notes.print()


class HumanRenderer:
    """Streamed text as it arrives, reasoning dimmed, one line per tool status, diffs when a tool settles, the
    plan as a checklist when it changes."""

    def __init__(self, console: Screen, notes: Screen, root: str | None = None) -> None:
        self._console = console
        self._notes = notes
        self._root = root  # paths under it are shown relative to it
        self._stream: tuple[str, str] | None = None  # (what, message id) being written on the current line
        self._mid_line = False
        self._tool_status: dict[str, ToolStatus] = {}
        self._plan: list[PlanEntry] = []

    def event(self, event: Event) -> None:
        kind = event.kind
        nested = event.turn_info is not None and event.turn_info.parent_tool_id is not None
        if isinstance(kind, TextDelta):
            self._write(("text", kind.message_id), kind.text, "dim" if nested else "")
        elif isinstance(kind, ReasoningDelta):
            self._write(("reasoning", kind.message_id), kind.text, "dim italic")
        elif isinstance(kind, MessageEnded):
            if self._stream is not None and self._stream[1] == kind.message_id:
                self._end_line()
        elif isinstance(kind, ToolUpdated):
            self._tool(kind.tool)
        elif isinstance(kind, PlanUpdated):
            if kind.entries != self._plan:
                self._plan = list(kind.entries)
                self._draw_plan()
        elif isinstance(kind, DiagnosticEvent):
            self.note(f"{kind.diagnostic.level.value.lower()}: {kind.diagnostic.message}", style="yellow")
        elif isinstance(kind, ContextCompacted):
            self.note("the agent compacted its context", style="dim")
        # Requests are drawn by whoever asks them; the rest (status, usage, session info) is not for a person.

    def note(self, message: str, *, style: str = "") -> None:
        self._end_line()
        self._notes.print(Styled(f"omniagent: {message}", style=style))

    def finish(self) -> None:
        self._end_line()

    def break_line(self) -> None:
        """End the streamed line so that something else (a prompt) starts on its own line."""
        self._end_line()

    def interrupted(self) -> None:
        if self._mid_line:
            self._end_line()  # the echoed ^C ends the streamed line
        elif self._notes.is_terminal:
            self._notes.print()

    # --- drawing -------------------------------------------------------------------------------------------

    def _write(self, stream: tuple[str, str], text: str, style: str) -> None:
        if not text:
            return
        if self._stream != stream:
            self._end_line()
            self._stream = stream
        self._console.print(Styled(text, style=style), end="")
        self._mid_line = not text.endswith("\n")

    def _end_line(self) -> None:
        if self._mid_line:
            self._console.print()
        self._mid_line = False
        self._stream = None

    def _line(self, text: Styled) -> None:
        self._end_line()
        self._console.print(text)

    def _tool(self, tool: ToolUpdate) -> None:
        if self._tool_status.get(tool.id) is tool.status:
            return  # a cumulative update with nothing a person needs to see again
        self._tool_status[tool.id] = tool.status
        mark, style = _TOOL_STYLES[tool.status]
        line = Styled.assemble((f"{mark} ", style), (tool.title, "bold"))
        subject = self._relative(_tool_subject(tool))
        if subject and subject.removeprefix("$ ") not in tool.title:
            line.append(f"  {subject}", style="dim")
        line.append(f"  {tool.status.value.lower()}", style=style)
        self._line(line)
        if tool.status.active:
            return
        for diff in tool.diffs:
            self._draw_diff(diff)
        if tool.output and (tool.status is ToolStatus.FAILED or isinstance(tool.kind, Execute)):
            self._draw_output(tool.output, FAILED_OUTPUT_LINES if tool.status is ToolStatus.FAILED else None)

    def _draw_output(self, output: str, lines: int | None) -> None:
        shown = output.rstrip("\n").splitlines()
        keep = lines or COMMAND_OUTPUT_LINES
        text = Styled()
        if len(shown) > keep:
            text.append(f"    … {len(shown) - keep} more lines\n", style="dim italic")
        text.append("\n".join(f"    {line}" for line in shown[-keep:]), style="dim")
        self._console.print(text)

    def _relative(self, path: str) -> str:
        """`path` relative to the session's directory when it lies under it (a person knows where they are)."""
        if self._root and path.startswith(self._root.rstrip("/") + "/"):
            return path[len(self._root.rstrip("/")) + 1 :]
        return path

    def _draw_diff(self, diff: FileDiff) -> None:
        old = (diff.old_text or "").splitlines(keepends=True)
        new = diff.new_text.splitlines(keepends=True)
        path = self._relative(diff.path)
        # git's a/ b/ prefixes read as a path only in front of a relative one (never `b//abs/path`).
        after = f"b/{path}" if not path.startswith("/") else path
        before = (f"a/{path}" if not path.startswith("/") else path) if diff.old_text is not None else "/dev/null"
        text = Styled()
        for line in difflib.unified_diff(old, new, before, after):
            body = line if line.endswith("\n") else line + "\n"
            text.append(f"    {body}", style=_diff_style(line))
        self._console.print(text, end="")

    def _draw_plan(self) -> None:
        text = Styled("Plan\n", style="bold")
        for entry in self._plan:
            style = "dim" if entry.status is PlanStatus.COMPLETED else ""
            text.append(f"  {_PLAN_MARKS[entry.status]} {entry.text}\n", style=style)
        self._end_line()
        self._console.print(text, end="")


def _diff_style(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "bold"
    if line.startswith("@@"):
        return "cyan"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    return ""


def _tool_subject(tool: ToolUpdate) -> str:
    """What the tool acts on, in a few words (the command, path, pattern, URL or query)."""
    value = tool.input
    if isinstance(value, CommandInput):
        return f"$ {value.spec.command}"
    if isinstance(value, PathInput):
        return value.path
    if isinstance(value, PatternInput):
        return value.pattern
    if isinstance(value, UrlInput):
        return value.url
    if isinstance(value, QueryInput):
        return value.query
    return tool.locations[0] if tool.locations else ""

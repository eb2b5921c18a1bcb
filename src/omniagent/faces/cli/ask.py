"""Who answers the agent's requests during `omniagent run`: a person at a terminal, or a rule when there is none.

An asker turns one open request (a permission or a set of questions) into an `Answer`, or None when the turn
should be cancelled instead. It never sends anything itself; `run.py` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import termios
from collections.abc import Awaitable, Callable, Iterator
from typing import Protocol

from omniagent.faces.cli.render import Screen, Styled
from omniagent.protocols.sidecar.commands import (
    Answer,
    ChoicesAnswer,
    PermissionAnswer,
    QuestionAnswer,
    QuestionsAnswer,
    TextAnswer,
)
from omniagent.protocols.sidecar.events import (
    SECRET_HEADER,
    PermissionChoice,
    PermissionRequest,
    Question,
    QuestionAsk,
    Request,
)

# How each choice reads to a person, and the words that pick it at the prompt (beside its number).
CHOICE_WORDS: dict[PermissionChoice, tuple[str, tuple[str, ...]]] = {
    PermissionChoice.ALLOW_ONCE: ("allow once", ("y", "yes", "allow", "once")),
    PermissionChoice.ALLOW_ALWAYS: ("allow always", ("a", "always")),
    PermissionChoice.DENY_ONCE: ("deny once", ("n", "no", "deny")),
    PermissionChoice.DENY_ALWAYS: ("deny always", ("never",)),
}
# Fallbacks when the agent does not offer the first choice a word names (e.g. "y" with only AllowAlways).
_ALLOW = (PermissionChoice.ALLOW_ONCE, PermissionChoice.ALLOW_ALWAYS)
_DENY = (PermissionChoice.DENY_ONCE, PermissionChoice.DENY_ALWAYS)

Note = Callable[[str], None]
# Reads one line typed in answer to `prompt` (with `secret`: masked, and kept in no history); None when input ended.
ReadLine = Callable[[str, bool], Awaitable[str | None]]


class Asker(Protocol):
    async def answer(self, request: Request) -> Answer | None:
        """The answer to send, or None to cancel the turn (the asker has said why)."""


def denial(request: PermissionRequest) -> PermissionChoice | None:
    """The deny choice to send when nobody can be asked: deny once, else deny always, else None."""
    return next((choice for choice in _DENY if choice in request.options), None)


class UnattendedAsker:
    """No terminal to ask on: deny every permission, cancel the turn on a question. Says so through `note`."""

    def __init__(self, note: Note) -> None:
        self._note = note

    async def answer(self, request: Request) -> Answer | None:
        if isinstance(request, QuestionAsk):
            self._note("the agent asked a question and there is no terminal to answer it; cancelling the turn")
            return None
        permission = request.request
        choice = denial(permission)
        if choice is None:
            self._note(f"cannot deny `{permission.tool.title}` (the agent offers no deny choice); cancelling the turn")
            return None
        self._note(
            f"denied `{permission.tool.title}` ({CHOICE_WORDS[choice][0]}): not a terminal; pass --yes to allow tools"
        )
        return PermissionAnswer(choice=choice)


class TerminalAsker:
    """Asks a person at the terminal, one request at a time. Input is read without blocking the event loop, so
    Ctrl-C and a withdrawn request can interrupt a prompt."""

    def __init__(
        self,
        console: Screen,
        note: Note,
        before_prompt: Callable[[], None],
        fd: int = 0,
        *,
        read_line: ReadLine | None = None,
    ) -> None:
        self._console = console
        self._note = note
        self._before_prompt = before_prompt
        # `chat` owns the terminal's line editor and hands its lines over; `run` reads the descriptor itself.
        self._read_line = read_line
        self._reader = LineReader(fd)
        self._lock = asyncio.Lock()

    async def answer(self, request: Request) -> Answer | None:
        async with self._lock:
            self._before_prompt()
            if isinstance(request, QuestionAsk):
                return await self._questions(request.request.questions)
            return await self._permission(request.request)

    async def _permission(self, request: PermissionRequest) -> Answer | None:
        self._console.print(Styled.assemble(("? ", "bold yellow"), ("Allow ", ""), (request.tool.title, "bold"), "?"))
        if request.detail:
            self._console.print(Styled(f"  {request.detail}", style="dim"))
        menu = "  ".join(f"{n}) {CHOICE_WORDS[choice][0]}" for n, choice in enumerate(request.options, 1))
        self._console.print(Styled(f"  {menu}", style="cyan"))
        while True:
            line = await self._ask(f"choice [1-{len(request.options)}, y/n]: ")
            if line is None:
                choice = denial(request)
                self._note("stdin closed; " + ("denying" if choice else "cancelling the turn"))
                return PermissionAnswer(choice=choice) if choice else None
            picked = pick_permission(line, request.options)
            if picked is not None:
                self._console.print(Styled(f"  → {CHOICE_WORDS[picked][0]}", style="dim"))
                return PermissionAnswer(choice=picked)

    async def _questions(self, questions: list[Question]) -> Answer | None:
        answers: list[QuestionAnswer] = []
        for question in questions:
            answer = await self._question(question)
            if answer is None:
                self._note("stdin closed; cancelling the turn")
                return None
            answers.append(answer)
        return QuestionsAnswer(answers=answers)

    async def _question(self, question: Question) -> QuestionAnswer | None:
        title = f"{question.header}: {question.text}" if question.header else question.text
        self._console.print(Styled.assemble(("? ", "bold yellow"), (title, "bold")))
        for n, choice in enumerate(question.choices, 1):
            self._console.print(Styled(f"  {n}) {choice.label}", style="cyan"))
        hint = _question_hint(question)
        secret = question.header == SECRET_HEADER
        while True:
            line = await self._ask(f"{hint}: ", secret=secret)
            if line is None:
                return None
            answer = pick_question_answer(line, question)
            if answer is not None:
                return answer

    async def _ask(self, prompt: str, *, secret: bool = False) -> str | None:
        if self._read_line is not None:
            return await self._read_line(prompt, secret)
        # Echo goes off before the prompt shows, so nothing typed after it is ever echoed.
        with hidden_input(self._reader.fd) if secret else contextlib.nullcontext():
            self._console.print(Styled(prompt, style="bold"), end="")
            return await self._reader.readline()


def pick_permission(line: str, options: list[PermissionChoice]) -> PermissionChoice | None:
    """The choice a person typed (its number, `y`/`n`/`a`, or its words), or None when it names none offered."""
    word = " ".join(line.lower().split())
    if word.isdigit():
        index = int(word) - 1
        return options[index] if 0 <= index < len(options) else None
    for choice, (label, words) in CHOICE_WORDS.items():
        if word == label or word in words:
            if choice in options:
                return choice
            family = _ALLOW if choice in _ALLOW else _DENY
            return next((other for other in family if other in options), None)
    return None


def pick_question_answer(line: str, question: Question) -> QuestionAnswer | None:
    """Choice numbers (comma-separated when several may be picked), else free text where allowed."""
    text = line.strip()
    if not text:
        return None
    if question.choices:
        parts = [part.strip() for part in text.split(",")]
        numbers = all(part.isdigit() and 1 <= int(part) <= len(question.choices) for part in parts)
        if numbers and (len(parts) == 1 or question.multi_select):
            return ChoicesAnswer(ids=[question.choices[int(part) - 1].id for part in parts])
    return TextAnswer(text=text) if question.allows_free_text else None


def _question_hint(question: Question) -> str:
    if not question.choices:
        return "answer"
    numbers = f"1-{len(question.choices)}"
    hint = f"numbers {numbers}, comma-separated" if question.multi_select else f"choice [{numbers}]"
    return f"{hint} or type an answer" if question.allows_free_text else hint


class LineReader:
    """Lines from a file descriptor, read through the event loop (cancellable, unlike `input()` in a thread)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""
        self._eof = False

    async def readline(self) -> str | None:
        """The next line without its newline, or None at end of input."""
        loop = asyncio.get_running_loop()
        while b"\n" not in self._buffer and not self._eof:
            ready: asyncio.Future[None] = loop.create_future()
            loop.add_reader(self.fd, _resolve, ready)
            try:
                await ready
            finally:
                loop.remove_reader(self.fd)
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:  # EIO: the terminal went away
                chunk = b""
            self._eof = not chunk
            self._buffer += chunk
        if not self._buffer:
            return None
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode(errors="replace").rstrip("\r")


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


@contextlib.contextmanager
def hidden_input(fd: int) -> Iterator[None]:
    """The terminal on `fd` does not echo what is typed (the newline still shows), as `getpass` does; a descriptor
    that is not a terminal is left alone."""
    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        yield
        return
    quiet = list(saved)
    quiet[3] = (quiet[3] & ~termios.ECHO) | termios.ECHONL
    termios.tcsetattr(fd, termios.TCSADRAIN, quiet)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)

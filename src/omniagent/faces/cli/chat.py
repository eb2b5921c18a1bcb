"""`omniagent chat`: a multi-turn terminal session on any agent the runtime drives (ours included).

    omniagent chat [--agent ID] [-C DIR] [-m MODEL] [--yes] [--resume]
    omniagent chat --attach URL[/SESSION] [--token TOKEN] [--agent ID] …   a session a hub owns (`omniagent hub`)

One line editor (prompt_toolkit: history, Alt-Enter or a trailing backslash for a new line) stays open the whole
time; the turn streams above it (`render.HumanRenderer`). A line typed while a turn runs is sent at once and the
runtime steers or queues it. While the agent asks something, the next line typed answers it (`ask.py`'s menus).
Ctrl-C cancels the running turn; a second Ctrl-C (or Ctrl-D) leaves. Slash commands are in `slash.py`.
With `--attach` the session is the hub's (`remote.py`): the same chat, but leaving detaches and the session goes on
(`AttachedChat`). Exit codes (docs/cli.md): 0 left normally; 1 the agent died or could not start (or the hub could
not be reached); 2 usage; 3 no agent to run; 130 left with Ctrl-C.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any, cast

from prompt_toolkit import PromptSession
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.patch_stdout import patch_stdout
from rich.console import Console

from omniagent.faces.cli.ask import TerminalAsker
from omniagent.faces.cli.render import HumanRenderer, RichScreen
from omniagent.faces.cli.run import (
    EXIT_NO_AGENT,
    EXIT_TURN_FAILED,
    EXIT_USAGE,
    NoAgent,
    named_agent,
    open_session,
    pick_agent,
    starting_point,
)
from omniagent.faces.cli.sessions import latest, remember, state_dir
from omniagent.faces.cli.slash import ChatBackend, ChatSession, SlashCommands
from omniagent.protocols.sidecar.agents import AgentInstallation, SessionStatus
from omniagent.protocols.sidecar.commands import PermissionMode, Queued, Steered
from omniagent.protocols.sidecar.events import (
    Cancelled,
    Completed,
    ContextUsage,
    Failed,
    Refused,
    Request,
    RequestClosed,
    RequestOpened,
    SessionUpdated,
    StopReason,
    TurnEnded,
)
from omniagent.runtime.errors import AgentError, SessionClosed
from omniagent.runtime.options import OpenOptions
from omniagent.runtime.runtime import MockScript, Runtime
from omniagent.runtime.session import Session

EXIT_LEFT = 0
EXIT_INTERRUPTED = 130


@dataclass(frozen=True, slots=True)
class ChatOptions:
    """What `omniagent chat` was asked to do (its arguments, by name)."""

    agent: str | None = None
    directory: str | None = None
    model: str | None = None
    yes: bool = False
    resume: bool = False
    attach: str | None = None  # a hub's URL, with a session to attach to or without (open one): `attach.py`
    token: str | None = None  # the hub's bearer token (else $OMNIAGENT_HUB_TOKEN, else the local hub's)
    mock: str | None = None  # a mock script replacing the machine's agents (tests; not in --help)


def run_chat(**arguments: Any) -> int:
    """Entry point of `omniagent chat`, given its parsed arguments (`ChatOptions`' fields); returns the exit code."""
    options = ChatOptions(**arguments)
    started = starting_point("chat", options.directory, options.mock)
    if started is None:
        return EXIT_USAGE
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("omniagent chat: error: chat needs a terminal; `omniagent run PROMPT` sends one prompt", file=sys.stderr)
        return EXIT_USAGE
    directory, script = started
    logging.basicConfig(level=logging.ERROR, format="omniagent: %(message)s", stream=sys.stderr)
    try:
        if options.attach is not None:
            return asyncio.run(_attached_chat(options, directory))
        return asyncio.run(_chat(options, directory, script))
    except KeyboardInterrupt:  # Ctrl-C while the agent was starting
        return EXIT_INTERRUPTED


def chat_screen(directory: str) -> tuple[HumanRenderer, PendingLine]:
    """The renderer a chat writes through, and the line it streams into (paths shown relative to `directory`)."""
    # Consoles resolve sys.stdout / sys.stderr at each write, so output goes above the line editor once
    # patch_stdout has replaced them. Streamed text goes through `PendingLine`: the editor redraws its own line
    # over a partial one, so the unfinished line is shown above the prompt by the editor itself.
    pending = PendingLine()
    text = Console(file=cast(IO[str], pending), highlight=False, soft_wrap=True, force_terminal=True)
    renderer = HumanRenderer(RichScreen(text), RichScreen(Console(stderr=True, highlight=False)), root=directory)
    return renderer, pending


async def _chat(options: ChatOptions, directory: str, script: MockScript | None) -> int:
    renderer, pending = chat_screen(directory)
    async with Runtime(mock=script) as runtime:
        resume = None
        try:
            agent, using = await pick_agent(runtime, options.agent, mock=script is not None, model=options.model)
            if options.resume:
                agent, resume = await _resumed(runtime, renderer, directory, agent, named=options.agent is not None)
        except NoAgent as error:
            renderer.note(str(error), style="red")
            return EXIT_NO_AGENT
        if using is not None and resume is None:
            renderer.note(using, style="dim")
        mode = PermissionMode.AUTO_APPROVE if options.yes else PermissionMode.ASK
        opening = OpenOptions(resume=resume, permission_mode=mode)
        session = await open_session(runtime, renderer, agent, directory, opening, options.model)
        if not isinstance(session, Session):
            return session
        return await Chat(runtime, agent, directory, session, renderer, mode, pending).run()


async def _resumed(
    runtime: Runtime, renderer: HumanRenderer, directory: str, agent: AgentInstallation, *, named: bool
) -> tuple[AgentInstallation, str | None]:
    """The agent and resume token of the last chat in `directory` (with `agent`, when it was `named`), else
    `agent` and None. Raises: `NoAgent` when the last chat's agent can no longer be driven (the message says so)."""
    record = latest(directory, agent.id if named else None)
    if record is None:
        renderer.note("no earlier chat in this directory to resume; starting a new one", style="yellow")
        return agent, None
    if record.agent != agent.id:
        try:
            agent = await named_agent(runtime, record.agent)
        except NoAgent as error:
            raise NoAgent(f"the last chat in this directory was with {record.agent}: {error}") from error
    renderer.note(f"resuming {record.title or 'the last session'} ({agent.id})", style="dim")
    return agent, record.resume_token


class PendingLine:
    """The file streamed text is written to: whole lines go on to stdout (above the editor) at once; the
    unfinished last line is kept for the editor to show above its prompt until its newline comes."""

    encoding = "utf-8"

    def __init__(self) -> None:
        self.text = ""
        self.changed: Callable[[], None] = lambda: None

    def write(self, data: str) -> int:
        head, newline, self.text = (self.text + data).rpartition("\n")
        if newline:
            sys.stdout.write(head + newline)
            sys.stdout.flush()
        self.changed()
        return len(data)

    def flush(self) -> None:
        """Nothing to do: whole lines are flushed as they are written, the partial one waits for its end."""

    def isatty(self) -> bool:
        return True


class Chat:
    """One chat: the line editor, the event reader and the answers to the agent's requests.

    The editor is the only reader of the terminal. Each submitted line is, in order of precedence: the answer to
    the request the agent is waiting on, a slash command, or a prompt for the agent.
    """

    greeting = "type a prompt; /help lists commands; Ctrl-C cancels a turn, twice leaves"

    def __init__(
        self,
        runtime: ChatBackend,
        agent: AgentInstallation,
        directory: str,
        session: ChatSession,
        renderer: HumanRenderer,
        mode: PermissionMode,
        pending: PendingLine,
    ) -> None:
        self.runtime = runtime
        self.agent = agent
        self.directory = directory
        self.session = session
        self.renderer = renderer
        self.mode = mode
        self._pending = pending
        self.context: ContextUsage | None = None  # the latest usage the agent reported, for /usage
        self._answer: asyncio.Future[str | None] | None = None
        self._answer_prompt = ""
        self._answer_secret = False  # the pending answer is a secret: masked, and kept in no history
        self._asked: dict[str, asyncio.Task[None]] = {}
        self._interrupted = False  # the last key was a Ctrl-C that did not cancel a turn
        self._reader: asyncio.Task[None] | None = None
        self._ended: AgentError | None = None
        self._leaving = False
        self._code = EXIT_LEFT
        self._lines: asyncio.Queue[str] = asyncio.Queue()
        self._asker = TerminalAsker(
            RichScreen(Console(highlight=False, soft_wrap=True)),
            self._warn,
            renderer.break_line,
            read_line=self._read_answer,
        )
        self._editor = self._line_editor()
        pending.changed = self._editor.app.invalidate

    def _line_editor(self) -> PromptSession[str]:
        """The editor every line is typed in; its history is kept on disk, without the secret answers."""
        state = state_dir()
        state.mkdir(parents=True, exist_ok=True, mode=0o700)
        return PromptSession(
            history=_History(str(state / "chat-history"), keep=lambda: not self._secret_pending()),
            key_bindings=_key_bindings(),
            is_password=Condition(self._secret_pending),
        )

    # --- the loop ------------------------------------------------------------------------------------------

    async def run(self) -> int:
        slash = SlashCommands(self)
        self._remember()
        loop = asyncio.get_running_loop()
        # Between two prompts the terminal is in cooked mode and Ctrl-C is a signal; inside one it is a key.
        loop.add_signal_handler(signal.SIGINT, lambda: loop.create_task(self._on_signal()))
        try:
            with patch_stdout(raw=True):
                self.switch_to(self.session)
                worker = asyncio.create_task(self._work(slash), name="chat lines")
                self.renderer.note(self.greeting)
                while not self._leaving:
                    try:
                        line = await self._editor.prompt_async(self._message, handle_sigint=False)
                    except KeyboardInterrupt:
                        if await self._on_interrupt():
                            self._code = EXIT_INTERRUPTED
                            break
                        continue
                    except EOFError:
                        break
                    self._take(line)
                worker.cancel()
                await asyncio.gather(worker, return_exceptions=True)
                await self._stop_reader()
                await self.retire(self.session)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        if self._ended is not None:
            self.renderer.note(f"the agent ended the session: {self._ended}", style="red")
            return EXIT_TURN_FAILED
        return self._code

    def _take(self, line: str) -> None:
        """A submitted line: an answer is taken at once; the rest is done in order by `_work`, so the editor is
        back at once (keys typed meanwhile reach it, not the terminal's line discipline)."""
        self._interrupted = False
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(line)
        elif line.strip():
            self._lines.put_nowait(line)

    async def _work(self, slash: SlashCommands) -> None:
        while True:
            line = (await self._lines.get()).strip()
            if line.startswith("/"):
                await slash.run(line)
            else:
                await self.send(line)

    async def _on_signal(self) -> None:
        if await self._on_interrupt():
            self._code = EXIT_INTERRUPTED
            self.leave()

    def leave(self) -> None:
        """End the chat (what /quit does); an open line editor is closed too."""
        self._leaving = True
        if self._editor.app.is_running:
            self._editor.app.exit(exception=EOFError())

    @property
    def turn_running(self) -> bool:
        return self.session.info().status is not SessionStatus.IDLE

    async def send(self, text: str) -> None:
        """Send a prompt; the runtime starts a turn, steers the running one, or queues it."""
        try:
            delivery = await self.session.prompt(text)
        except AgentError as error:
            self.renderer.note(f"not sent: {error}", style="red")
            return
        if isinstance(delivery.kind, Queued):
            ahead = delivery.kind.position
            self.renderer.note(
                f"queued: runs after the current turn{f' and {ahead} more' if ahead else ''}", style="dim"
            )
        elif isinstance(delivery.kind, Steered):
            self.renderer.note("added to the running turn", style="dim")

    def switch_to(self, session: ChatSession) -> None:
        """Read `session`'s events from now on (at start, and after /fork)."""
        self.session = session
        self._reader = asyncio.create_task(self._read_events(session), name="chat events")
        self._remember()

    async def _stop_reader(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
            self._reader = None

    async def retire(self, session: ChatSession) -> None:
        """Let go of a session that is no longer the chat's (the source of a /fork, or the chat's own as it ends):
        close it, since a chat of its own owns its sessions."""
        await session.close()

    async def _on_interrupt(self) -> bool:
        """Ctrl-C: cancel the running turn; with none running, the second one in a row leaves (returns True)."""
        if self.turn_running:
            self._interrupted = False
            self.renderer.note("cancelling the turn (Ctrl-C again to leave)", style="yellow")
            try:
                await self.session.cancel()
            except SessionClosed:
                return True
            self._interrupted = True
            return False
        if self._interrupted:
            return True
        self._interrupted = True
        self.renderer.note("press Ctrl-C again (or Ctrl-D) to leave", style="dim")
        return False

    def _message(self) -> str | ANSI:
        prompt = self._answer_prompt if self._answer is not None else f"{self.agent.id}> "
        return ANSI(f"{self._pending.text}\n{prompt}") if self._pending.text else prompt

    # --- events and requests -------------------------------------------------------------------------------

    async def _read_events(self, session: ChatSession) -> None:
        try:
            async for event in session.events:
                self.renderer.event(event)
                kind = event.kind
                if isinstance(kind, RequestOpened):
                    self._ask(kind.request)
                elif isinstance(kind, RequestClosed):
                    task = self._asked.pop(kind.request_id, None)
                    if task is not None:
                        task.cancel()
                elif isinstance(kind, ContextUsage):
                    self.context = kind
                elif isinstance(kind, TurnEnded):
                    self.renderer.finish()  # the next turn's text starts on a line of its own
                    self._say_end(kind.stop)
                elif isinstance(kind, SessionUpdated):
                    self._remember()
        except AgentError as error:
            self._ended = error
        if session is self.session and not self._leaving:  # the agent ended it, not us
            self._ended = self._ended or session.events.error or SessionClosed()
            self.leave()

    def _say_end(self, stop: StopReason) -> None:
        if isinstance(stop, Cancelled):
            self.renderer.note("turn cancelled", style="yellow")
        elif isinstance(stop, Completed) and stop.limit is not None:
            self.renderer.note(f"the turn stopped at {stop.limit.reached}", style="yellow")
        elif isinstance(stop, Failed):
            self.renderer.note(f"the turn failed: {stop.message}", style="red")
        elif isinstance(stop, Refused):
            self.renderer.note("the agent refused the prompt", style="red")

    def _ask(self, request: Request) -> None:
        request_id = request.request.id
        self._asked[request_id] = asyncio.create_task(self._answer_request(request), name=f"ask {request_id}")

    async def _answer_request(self, request: Request) -> None:
        request_id = request.request.id
        answer = await self._asker.answer(request)
        self._asked.pop(request_id, None)
        try:
            if answer is None:
                await self.session.cancel()
            else:
                await self.session.answer(request_id, answer)
        except SessionClosed:
            return
        except AgentError as error:
            self._warn(f"the answer was not taken: {error}")

    def _secret_pending(self) -> bool:
        return self._answer is not None and self._answer_secret

    async def _read_answer(self, prompt: str, secret: bool) -> str | None:
        """The next line typed, as the answer to a request; the editor shows `prompt` meanwhile (and masks what is
        typed, keeping it out of the history, for a `secret`)."""
        self._answer = asyncio.get_running_loop().create_future()
        self._answer_prompt = prompt
        self._answer_secret = secret
        self._editor.app.invalidate()
        try:
            return await self._answer
        finally:
            self._answer = None
            if self._editor.app.is_running:
                self._editor.app.invalidate()

    def _warn(self, message: str) -> None:
        self.renderer.note(message, style="yellow")

    def _remember(self) -> None:
        info = self.session.info()
        if info.resume_token:
            remember(self.agent.id, self.directory, info.resume_token, info.title)


async def _attached_chat(options: ChatOptions, directory: str) -> int:
    """`chat --attach URL[/SESSION]`: the chat on a session a hub owns (`omniagent hub`). With a session, it
    attaches as a controller and replays what the hub keeps of it, then follows it live; without one, it opens a new
    session in the hub with `--agent` in `-C DIR` (else here). Exit codes as `chat`'s, with 1 when the hub cannot
    be reached, refuses the token, or has no such session."""
    from omniagent.faces.cli.remote import HubLink, split_url
    from omniagent.serving.hub_token import hub_token

    assert options.attach is not None
    try:
        _, session_id = split_url(options.attach)
    except ValueError as error:
        print(f"omniagent chat: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    if session_id is None and options.agent is None:
        print(
            "omniagent chat: error: name the agent of the new session with --agent (or attach to URL/SESSION)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    mode = PermissionMode.AUTO_APPROVE if options.yes else PermissionMode.ASK
    renderer, pending = chat_screen(directory)
    try:
        async with HubLink.connect(options.attach, hub_token(options.token)) as link:
            try:
                if session_id is None:
                    assert options.agent is not None
                    configure = {"model": options.model} if options.model else {}
                    opening = OpenOptions(permission_mode=mode, configure=configure)
                    session = await link.open(options.agent, directory, opening)
                else:
                    rows = {row.id: row for row in (await link.sessions()).sessions if not row.past}
                    session = await link.attach(session_id)
                    directory = rows[session_id].directory if session_id in rows else directory
            except AgentError as error:
                agent = options.agent or "the session"
                renderer.note(f"could not start {agent}: {error}" if session_id is None else str(error), style="red")
                return EXIT_TURN_FAILED
            where = options.attach.rstrip("/") + ("" if session_id else f"/{session.id}")
            chat = AttachedChat(link, session.info().agent, directory, session, renderer, mode, pending)
            chat.where = where
            return await chat.run()
    except ConnectionError as error:
        renderer.note(str(error), style="red")
        return EXIT_TURN_FAILED


class AttachedChat(Chat):
    """A chat on a hub's session: leaving detaches (the hub keeps the session); nothing is recorded for
    `chat --resume`, since the session is the hub's to resume."""

    greeting = "type a prompt; /help lists commands; Ctrl-C cancels a turn; Ctrl-D detaches (the session goes on)"

    where = ""  # the URL that attaches to this session again

    async def retire(self, session: ChatSession) -> None:
        from omniagent.faces.cli.remote import RemoteSession

        if isinstance(session, RemoteSession) and not session.closed:
            await session.detach()
            if session is self.session:
                self.renderer.note(f"detached; the session goes on in the hub (--attach {self.where})", style="dim")

    def _remember(self) -> None:
        """Nothing: the hub keeps its sessions."""


def _key_bindings() -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("escape", "enter")  # Alt-Enter: a new line instead of sending
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("enter")
    def _submit(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.document.text_before_cursor.endswith("\\") and buffer.document.is_cursor_at_the_end:
            buffer.delete_before_cursor(1)  # a trailing backslash continues on the next line
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    return bindings


class _History(FileHistory):
    """The chat's line history on disk, which skips the lines `keep` says not to keep (a secret answer)."""

    def __init__(self, filename: str, *, keep: Callable[[], bool]) -> None:
        super().__init__(filename)
        self._keep = keep

    def append_string(self, string: str) -> None:
        if self._keep():
            super().append_string(string)

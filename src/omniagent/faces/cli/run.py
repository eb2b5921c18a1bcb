"""`omniagent run`: one prompt to one agent in the current directory, the turn shown as it happens.

    omniagent run [--agent ID] [--yes] [--json] PROMPT

Picks the agent (`choose_agent`: a ready engine first, else the first drivable agent; it says which, with the
engine's model or where the agent was found, and why), opens a session, sends the prompt, and reads the session's
events until the turn ends: the renderer draws them (`render.py`), the asker answers the agent's requests
(`ask.py`).
Exit codes (docs/run.md): 0 completed; 1 failed, refused, cancelled or the agent died; 2 usage; 3 no agent to
run (none found, unknown, not drivable yet, or it needs a login); 130 interrupted with Ctrl-C; 141 stdout's reader
went away (`| head`: the CLI's error boundary, `faces/pipes.py`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from omniagent.errors import OmniagentError
from omniagent.faces.cli.ask import Asker, TerminalAsker, UnattendedAsker
from omniagent.faces.cli.render import HumanRenderer, JsonRenderer, Renderer, Screen, screen, stderr_screen
from omniagent.protocols.sidecar.agents import AgentInstallation, DiscoveryReport
from omniagent.protocols.sidecar.commands import PermissionMode, Started
from omniagent.protocols.sidecar.events import (
    Cancelled,
    Completed,
    Failed,
    Refused,
    Request,
    RequestClosed,
    RequestOpened,
    StopLimit,
    StopReason,
    TurnEnded,
)
from omniagent.runtime.advice import first_run, login_hint, rejected_hint
from omniagent.runtime.catalog import ENGINE_ID, ConnectionKind, profile
from omniagent.runtime.errors import (
    AgentError,
    AuthRequired,
    InvalidConfiguration,
    NotInstalled,
    ProcessExited,
    SessionClosed,
)
from omniagent.runtime.options import OpenOptions
from omniagent.runtime.runtime import EngineChoice, MockScript, MockScriptError, Runtime
from omniagent.runtime.session import Session

EXIT_COMPLETED = 0
EXIT_TURN_FAILED = 1  # the turn failed, was refused or cancelled, or the agent could not run it
EXIT_USAGE = 2  # argparse's code for bad arguments
EXIT_NO_AGENT = 3  # nothing to run the prompt with: no agent, an unknown one, or one that needs a login
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for Ctrl-C

# Seconds to wait for the turn to end after Ctrl-C beyond the runtime's cancel grace: slack to report the end.
INTERRUPT_SLACK = 2.0


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What `omniagent run` was asked to do (its arguments, by name)."""

    prompt: str
    agent: str | None = None
    yes: bool = False
    json: bool = False
    mock: str | None = None  # a mock script replacing the machine's agents (tests; not in --help)
    directory: str | None = None  # -C: where the agent works (default: the current directory)
    model: str | None = None  # -m: the session's `model` option


class NoAgent(OmniagentError):
    """There is no agent to run the prompt with; the message says why and what to do."""


def run_command(**arguments: Any) -> int:
    """Entry point of `omniagent run`, given its parsed arguments (`RunOptions`' fields); returns the exit code."""
    options = RunOptions(**arguments)
    if not options.prompt.strip():
        print("omniagent run: error: the prompt is empty", file=sys.stderr)
        return EXIT_USAGE
    started = starting_point("run", options.directory, options.mock)
    if started is None:
        return EXIT_USAGE
    directory, script = started
    options = replace(options, directory=directory)
    # Our notes say what went wrong; runtime warnings would repeat them less clearly.
    logging.basicConfig(level=logging.ERROR, format="omniagent: %(message)s", stream=sys.stderr)
    try:
        return asyncio.run(_run(options, script))
    except KeyboardInterrupt:  # Ctrl-C before the turn started (or after it ended)
        return EXIT_INTERRUPTED


def starting_point(command: str, wanted: str | None, mock: str | None) -> tuple[str, MockScript | None] | None:
    """The working directory and mock script `run` and `chat` start from; None once the usage error is said on
    stderr (a directory that does not exist, an unreadable mock script)."""
    directory = working_directory(wanted)
    if directory is None:
        where = wanted or "the current directory"
        print(
            f"omniagent {command}: error: {where} does not exist (any more); cd to a directory or pass -C DIR",
            file=sys.stderr,
        )
        return None
    try:
        return directory, Runtime.load_mock(mock) if mock is not None else None
    except MockScriptError as error:
        print(f"omniagent {command}: error: {error}", file=sys.stderr)
        return None


def working_directory(wanted: str | None) -> str | None:
    """The absolute directory to work in (`-C DIR`, else the current one), or None when it does not exist."""
    try:
        directory = os.path.abspath(wanted) if wanted else os.getcwd()
    except FileNotFoundError:  # the shell's directory was deleted under it
        return None
    return directory if os.path.isdir(directory) else None


def choose_agent(
    report: DiscoveryReport,
    drivable: Callable[[AgentInstallation], bool],
    engine_ready: Callable[[], bool] = lambda: False,
) -> AgentInstallation | None:
    """The agent `run` uses when none is named: our engine when it is ready (a provider with a model and a key),
    else the first other installed agent, in discovery order, that omniagent can drive, else the engine anyway (it
    then says which key to set). `engine_ready` is asked only when the report holds the engine."""
    engine = next((agent for agent in report.agents if is_engine(agent) and drivable(agent)), None)
    if engine is not None and engine_ready():
        return engine
    other = next((agent for agent in report.agents if not is_engine(agent) and drivable(agent)), None)
    return other or engine


def is_engine(agent: AgentInstallation) -> bool:
    """Whether the installation is our own engine (the catalog's in-process row)."""
    row = profile(agent.id)
    return agent.acp_args is None and row is not None and row.connection is ConnectionKind.ENGINE


async def pick_agent(
    runtime: Runtime, wanted: str | None, *, mock: bool, model: str | None = None
) -> tuple[AgentInstallation, str | None]:
    """The named agent, or `choose_agent`'s pick with the line that says which it is and why (`using …`); None
    for a named agent, and for the engine picked only because nothing else is there when it cannot run (the
    error that follows says what to do). `mock`: the runtime plays a mock script (its one agent is the pick);
    `model`: the `-m` the session will get. Raises: `NoAgent`."""
    if wanted is not None:
        return await named_agent(runtime, wanted), None
    return await _default_agent(runtime, mock=mock, model=model)


async def named_agent(runtime: Runtime, wanted: str) -> AgentInstallation:
    """The installed agent `wanted`. Raises: `NoAgent` (missing, unknown or not drivable: the message says which)."""
    report = await runtime.discover()
    found = next((agent for agent in report.agents if agent.id == wanted), None)
    if found is None:
        missing = next((agent for agent in report.missing if agent.id == wanted), None)
        if missing is not None:
            raise NoAgent(f"{missing.name} is not installed; install it with: {missing.install_hint}")
        names = ", ".join(agent.id for agent in report.agents) or "none"
        raise NoAgent(f"unknown agent `{wanted}` (installed: {names})")
    if not runtime.drivable(found):
        raise NoAgent(f"omniagent cannot drive {found.name} ({found.id}) yet")
    return found


async def _default_agent(runtime: Runtime, *, mock: bool, model: str | None) -> tuple[AgentInstallation, str | None]:
    """`choose_agent`'s pick and the line saying it. A ready engine is the pick whatever else is installed, so
    then nothing is discovered (no login shell is started)."""
    ready: list[EngineChoice | None] = []  # remembered: the key files are read once, whoever asks

    def engine_ready() -> bool:
        if not ready:
            ready.append(runtime.engine_choice())
        return ready[0] is not None

    if not mock and engine_ready():
        engine = await runtime.resolve(ENGINE_ID)
        if runtime.drivable(engine):
            return engine, _using_engine(runtime, ready[0], model)
    report = await runtime.discover()
    chosen = choose_agent(report, runtime.drivable, engine_ready)
    if chosen is not None and is_engine(chosen):
        return chosen, _using_engine(runtime, ready[0] if ready else None, model)
    if chosen is not None:
        if mock:
            return chosen, f"using {chosen.name} (the agent the --mock script plays)"
        why = f"the first agent CLI found: {chosen.executable_path}"
        if ready:  # the engine was asked first, and could not run
            why += "; our engine has no model provider key"
        return chosen, f"using {chosen.name} ({why})"
    if not report.agents:
        raise NoAgent("no agent CLI found on this machine; `omniagent agents` lists what to install")
    names = ", ".join(agent.id for agent in report.agents)
    raise NoAgent(f"omniagent cannot drive any installed agent yet (installed: {names})")


def _using_engine(runtime: Runtime, default: EngineChoice | None, model: str | None) -> str | None:
    """The engine's line: the model its session will run and what lets it (`-m`'s model when given), else, for a
    `-m` it cannot run, only why the engine was picked; None when the engine cannot run at all."""
    chosen = runtime.engine_choice(model) if model is not None else default
    if chosen is not None:
        return f"using our engine with {chosen.model} ({chosen.because})"
    if default is not None:  # the session will refuse `-m` and say why
        return f"using our engine ({default.because})"
    return None


async def _run(options: RunOptions, script: MockScript | None) -> int:
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    notes = stderr_screen()
    renderer: Renderer
    if options.json:
        renderer = JsonRenderer(sys.stdout.buffer, notes)
    else:
        renderer = HumanRenderer(screen(sys.stdout), notes, root=options.directory)
    asker = _asker(options, renderer, notes, interactive=interactive)
    async with Runtime(mock=script) as runtime:
        try:
            agent, using = await pick_agent(runtime, options.agent, mock=script is not None, model=options.model)
        except NoAgent as error:
            renderer.note(str(error), style="red")
            return EXIT_NO_AGENT
        if using is not None:
            renderer.note(using, style="dim")
        mode = PermissionMode.AUTO_APPROVE if options.yes else PermissionMode.ASK
        opening = OpenOptions(permission_mode=mode)
        session = await open_session(runtime, renderer, agent, options.directory or os.getcwd(), opening, options.model)
        if not isinstance(session, Session):
            return session
        wait = runtime.cancel_grace + INTERRUPT_SLACK
        outcome = await _TurnRunner(session, renderer, asker, wait).run(options.prompt)
        renderer.finish()
        await runtime.aclose()
        ended_with = session.events.error  # known once the session has closed (a death or a lost login)
        if isinstance(ended_with, AuthRequired):
            return await _no_agent(renderer, runtime, agent, ended_with)
    return _exit_code(renderer, outcome if outcome.error else replace(outcome, error=ended_with))


def _asker(options: RunOptions, renderer: Renderer, notes: Screen, *, interactive: bool) -> Asker:
    def note(message: str) -> None:
        renderer.note(message, style="yellow")

    if not interactive:
        return UnattendedAsker(note)
    if isinstance(renderer, HumanRenderer):
        return TerminalAsker(screen(sys.stdout), note, renderer.break_line)
    return TerminalAsker(notes, note, lambda: None)  # --json keeps stdout for events: ask on stderr


async def open_session(
    runtime: Runtime,
    renderer: Renderer,
    agent: AgentInstallation,
    directory: str,
    options: OpenOptions,
    model: str | None,
) -> Session | int:
    """The session `run` and `chat` work in (`-m MODEL` set as its `model` option), or, once the renderer has said
    why it did not open, the exit code."""
    try:
        return await runtime.open(agent.id, directory, options, configure={"model": model} if model else {})
    except (AuthRequired, NotInstalled) as error:
        return await _no_agent(renderer, runtime, agent, error)
    except AgentError as error:
        renderer.note(start_failure(agent, error, model), style="red")
        return EXIT_TURN_FAILED


async def _no_agent(renderer: Renderer, runtime: Runtime, agent: AgentInstallation, error: AgentError) -> int:
    renderer.note(await explain_no_agent(runtime, agent, error), style="red")
    return EXIT_NO_AGENT


def start_failure(agent: AgentInstallation, error: AgentError, model: str | None) -> str:
    """Why the session did not open; a refused `-m` says so, since the flag is ours, not the agent's."""
    if model is not None and isinstance(error, InvalidConfiguration):
        return f"{agent.name} did not take `-m {model}`: {error} (omit -m, or pick another agent with --agent)"
    return f"could not start {agent.id}: {error}"


async def explain_no_agent(runtime: Runtime, agent: AgentInstallation, error: AgentError) -> str:
    """Why the agent cannot run and what to do, as `run` and `chat` say it. The engine picked only because
    nothing else is installed, and without a key, is a first run: the three ways forward."""
    report = await runtime.discover()
    if not isinstance(error, AuthRequired):
        return str(error)
    if error.rejected is not None:
        return f"{agent.name} could not log in: {rejected_hint(error.rejected, error.login)}"
    if is_engine(agent) and not any(not is_engine(other) and runtime.drivable(other) for other in report.agents):
        return first_run(report)
    return f"{agent.name} needs a login: {login_hint(error.login)}"


@dataclass(frozen=True, slots=True)
class _Outcome:
    stop: StopReason | None = None  # how our turn ended, when it did
    error: AgentError | None = None  # why the events stopped before it did
    interrupted: bool = False  # Ctrl-C was pressed
    timed_out: bool = False  # the turn did not end within the runner's wait after Ctrl-C


def _exit_code(renderer: Renderer, outcome: _Outcome) -> int:
    if outcome.interrupted:
        if outcome.timed_out:
            renderer.note("the agent did not stop in time; leaving", style="red")
        return EXIT_INTERRUPTED
    stop = outcome.stop
    if isinstance(stop, Completed):
        if stop.limit is None:
            return EXIT_COMPLETED
        renderer.note(f"the turn stopped at {stop.limit.reached}", style="yellow")
        # A limit is no failure, but a turn out of model requests left its work undone: exit 1, as when that was
        # a failed turn; a reply cut at the output limit exits 0, as it always has.
        return EXIT_TURN_FAILED if stop.limit is StopLimit.MAX_TURN_REQUESTS else EXIT_COMPLETED
    if isinstance(stop, Failed):
        reason = f"the turn failed: {stop.message}"
        # An agent's death is already in the turn's message, with its status and stderr: not said twice.
        if outcome.error is not None and not isinstance(outcome.error, ProcessExited):
            reason += f" ({outcome.error})"
    elif isinstance(stop, Refused):
        reason = "the agent refused the prompt"
    elif isinstance(stop, Cancelled):
        reason = "the turn was cancelled"
    else:
        reason = f"the session ended before the turn did: {outcome.error or 'closed'}"
    renderer.note(reason, style="red")
    return EXIT_TURN_FAILED


class _TurnRunner:
    """Sends the prompt and reads events until the turn ends, answering requests as they open. Ctrl-C cancels
    the turn; the runner then waits at most `wait` seconds for it to end (a second Ctrl-C stops waiting)."""

    def __init__(self, session: Session, renderer: Renderer, asker: Asker, wait: float) -> None:
        self._session = session
        self._renderer = renderer
        self._asker = asker
        self._wait = wait
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._group: asyncio.TaskGroup | None = None
        self._deadline: asyncio.Timeout | None = None
        self._interrupted = False

    async def run(self, prompt: str) -> _Outcome:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, self._interrupt)
        try:
            async with asyncio.timeout(None) as self._deadline:
                stop, error = await self._read(prompt)
        except TimeoutError:
            return _Outcome(interrupted=True, timed_out=True)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        return _Outcome(stop=stop, error=error, interrupted=self._interrupted)

    async def _read(self, prompt: str) -> tuple[StopReason | None, AgentError | None]:
        try:
            delivery = await self._session.prompt(prompt)
        except AgentError as error:
            return None, error
        turn_id = delivery.kind.turn_id if isinstance(delivery.kind, Started) else None
        async with asyncio.TaskGroup() as self._group:
            if self._interrupted:  # Ctrl-C while the prompt was being sent
                self._group.create_task(self._cancel())
            try:
                async for event in self._session.events:
                    self._renderer.event(event)
                    kind = event.kind
                    if isinstance(kind, RequestOpened):
                        self._open(kind.request)
                    elif isinstance(kind, RequestClosed):
                        self._withdraw(kind.request_id)
                    elif isinstance(kind, TurnEnded) and event.turn_info and event.turn_info.id == turn_id:
                        return kind.stop, self._session.events.error
            except AgentError as error:  # the agent died or lost its login after the turn's last event
                return None, error
            finally:
                self._group = None  # the group is closing: a late Ctrl-C must not start tasks in it
                for request_id in list(self._pending):
                    self._withdraw(request_id)
        return None, self._session.events.error

    def _open(self, request: Request) -> None:
        assert self._group is not None
        request_id = request.request.id
        self._pending[request_id] = self._group.create_task(self._answer(request), name=f"answer {request_id}")

    def _withdraw(self, request_id: str) -> None:
        task = self._pending.pop(request_id, None)
        if task is not None:
            task.cancel()

    async def _answer(self, request: Request) -> None:
        request_id = request.request.id
        answer = await self._asker.answer(request)
        self._pending.pop(request_id, None)  # answered: its RequestClosed must not cancel this task
        try:
            if answer is None:
                await self._session.cancel()
            else:
                await self._session.answer(request_id, answer)
        except SessionClosed:
            return
        except AgentError as error:  # the request closed while the person was deciding
            self._renderer.note(f"the answer was not taken: {error}", style="yellow")

    def _interrupt(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._deadline is not None
        if self._interrupted:
            self._deadline.reschedule(loop.time())
            return
        self._interrupted = True
        self._renderer.interrupted()
        self._renderer.note("interrupted: cancelling the turn (Ctrl-C again to leave now)", style="yellow")
        for request_id in list(self._pending):
            self._withdraw(request_id)
        self._deadline.reschedule(loop.time() + self._wait)
        if self._group is not None:
            self._group.create_task(self._cancel())

    async def _cancel(self) -> None:
        try:
            await self._session.cancel()
        except SessionClosed:
            return

"""One open opencode session: driver commands become HTTP calls, the `/event` stream becomes driver events.

The event pump (`pump`) reads the server's SSE stream from before the session exists, so nothing of the first turn
is missed; `translate.py` says what each event means. A prompt goes out with `prompt_async` (a known slash
command with `/command`), after `TurnAck`; `session.idle` ends the turn (`Cancelled` after an abort, `Failed` after
a session error); a prompt the server never admits fails after ADMIT_TIMEOUT. Rollback reverts to the N-th last
user message, compact runs `/summarize`. Turn rules stay the session loop's.
"""

from __future__ import annotations

import asyncio
import base64
import mimetypes
from collections.abc import Coroutine, Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

from omniagent.protocols.sidecar.agents import LoginMethod
from omniagent.protocols.sidecar.base import Diagnostic, DiagnosticLevel
from omniagent.protocols.sidecar.commands import (
    Answer,
    ChoicesAnswer,
    PermissionAnswer,
    QuestionsAnswer,
)
from omniagent.protocols.sidecar.events import Cancelled, Completed, DiagnosticEvent, Failed, StopLimit, StopReason
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.acp.prompt import INLINE_ATTACHMENT_CAP, prompt_text
from omniagent.runtime.adapters.opencode.info import ServerFacts, SessionSettings, apply_option, driver_info, real_title
from omniagent.runtime.adapters.opencode.server import REQUEST_TIMEOUT, OpencodeServer, ServerError
from omniagent.runtime.adapters.opencode.translate import PERMISSION_REPLIES, EventMapper, Signals

# Seconds a prompt may wait for the server to start working on it.
ADMIT_TIMEOUT = 10.0
# Seconds a compaction (one summary call to the model) may take.
SUMMARIZE_TIMEOUT = 600.0
# Seconds an ended event stream waits for the server's exit status before it is reported as the end.
STREAM_END_GRACE = 5.0
# Last server stderr lines carried by `Exited`.
STDERR_TAIL = 6


class OpencodeDriver:
    """The running session; made by `OpencodeAdapter.connect` once the session exists on the server."""

    def __init__(
        self,
        server: OpencodeServer,
        events: d.EventSink,
        facts: ServerFacts,
        settings: SessionSettings,
        logins: list[LoginMethod],
        directory: str,
    ) -> None:
        self._server = server
        self._events = events
        self._facts = facts
        self._settings = settings
        self._logins = logins
        self.mapper = EventMapper(facts, directory)
        self.group: asyncio.TaskGroup | None = None
        self.connected = asyncio.Event()  # the event stream is open: nothing after this is missed
        self._commands: asyncio.Queue[d.DriverCommand | None] = asyncio.Queue()
        self._closing = False
        self._exit_reported = False
        self._tasks: set[asyncio.Task[None]] = set()
        # The current turn, as the server shows it.
        self._turn_open = False
        self._admitted = asyncio.Event()
        self._cancelled = False
        self._error: str | None = None
        self._limit: StopLimit | None = None  # the limit the turn's last reply stopped at

    @property
    def info(self) -> d.DriverInfo:
        return driver_info(self._facts, self._settings, self._logins)

    def send(self, command: d.DriverCommand) -> None:
        self._commands.put_nowait(command)

    def stop(self) -> None:
        self._commands.put_nowait(None)

    def go_live(self, session_id: str) -> None:
        """Start taking this session's events (the pump drops every event until then)."""
        self._settings.session_id = session_id
        self.mapper.session_id = session_id

    # --- commands ------------------------------------------------------------------------------------------

    async def run(self) -> None:
        watcher = self._spawn(self._watch_exit())
        try:
            while (command := await self._commands.get()) is not None:
                if isinstance(command, d.Close):
                    break
                await self._handle(command)
        finally:
            self._closing = True
            watcher.cancel()
            for task in list(self._tasks):
                task.cancel()
            self._events.close()

    async def _handle(self, command: d.DriverCommand) -> None:
        if isinstance(command, d.StartTurn):
            await self._start(command.input)
        elif isinstance(command, d.Steer):
            await self._events.send(d.SteerResult(accepted=False))  # not advertised: opencode queues instead
        elif isinstance(command, d.AnswerRequest):
            self._spawn(self._answer(command.request_id, command.answer))
        elif isinstance(command, d.Configure):
            apply_option(self._facts, self._settings, command.option, command.value)
            await self._events.send(d.InfoChanged(self.info))
        elif isinstance(command, d.Cancel):
            await self._cancel()
        elif isinstance(command, d.Rollback):
            await self._rollback(command.turns)
        elif isinstance(command, d.Compact):
            self._open_turn()
            self._admitted.set()  # a summary call is admitted when it is made
            self._spawn(self._summarize())

    def _open_turn(self) -> None:
        self._turn_open, self._cancelled, self._error, self._limit = True, False, None, None
        self._admitted = asyncio.Event()

    async def _start(self, prompt: d.PromptInput) -> None:
        self._open_turn()
        await self._events.send(d.TurnAck())
        session = self._settings.session_id
        command = self._slash_command(prompt.text)
        if command is not None:
            name, arguments = command
            body: dict[str, Any] = {"command": name, "arguments": arguments, "agent": self._settings.agent}
            if self._settings.model is not None:
                body["model"] = self._settings.model
            # `/command` answers when the command's turn is over; its end still comes as `session.idle`.
            self._spawn(self._post_turn(f"/session/{session}/command", body, seconds=None))
        else:
            body = {"parts": await _parts(prompt), "agent": self._settings.agent}
            if (model := self._settings.model_ref()) is not None:
                body["model"] = model
            if self._settings.variant is not None:
                body["variant"] = self._settings.variant
            await self._post_turn(f"/session/{session}/prompt_async", body)
        self._spawn(self._admission_watch(self._admitted))

    def _slash_command(self, text: str) -> tuple[str, str] | None:
        if not text.startswith("/"):
            return None
        name, _, arguments = text[1:].partition(" ")
        known = {c.name for c in self._facts.commands}
        return (name, arguments.strip()) if name in known else None

    async def _post_turn(self, path: str, body: Mapping[str, Any], *, seconds: float | None = REQUEST_TIMEOUT) -> None:
        try:
            await self._server.post(path, body, seconds=seconds)
        except ServerError as exc:
            await self._end_turn(Failed(message=exc.message))

    async def _admission_watch(self, admitted: asyncio.Event) -> None:
        try:
            async with asyncio.timeout(ADMIT_TIMEOUT):
                await admitted.wait()
        except TimeoutError:
            if self._turn_open and admitted is self._admitted:
                await self._end_turn(Failed(message=f"opencode did not start the prompt within {ADMIT_TIMEOUT:g} s"))

    async def _answer(self, request_id: str, answer: Answer) -> None:
        try:
            if isinstance(answer, PermissionAnswer):
                await self._server.post(f"/permission/{request_id}/reply", {"reply": PERMISSION_REPLIES[answer.choice]})
            elif isinstance(answer, QuestionsAnswer):
                replies = [r.ids if isinstance(r, ChoicesAnswer) else [r.text] for r in answer.answers]
                await self._server.post(f"/question/{request_id}/reply", {"answers": replies})
        except ServerError as exc:
            await self._warn(f"opencode refused the answer to {request_id}: {exc.message}")

    async def _cancel(self) -> None:
        if not self._turn_open:
            return
        self._cancelled = True
        try:
            await self._server.post(f"/session/{self._settings.session_id}/abort")
        except ServerError as exc:
            await self._warn(f"opencode refused to abort: {exc.message}")

    async def _rollback(self, turns: int) -> None:
        """Revert to the `turns`-th last user prompt: it and everything after it leave the conversation (opencode
        drops them for good with the next prompt)."""
        session = self._settings.session_id
        try:
            messages = await self._server.get(f"/session/{session}/message")
            prompts = [m["info"]["id"] for m in messages if _is_prompt(m)]
            if turns < 1 or turns > len(prompts):
                await self._warn(f"cannot roll back {turns} turn(s): the session has {len(prompts)}")
                return
            await self._server.post(f"/session/{session}/revert", {"messageID": prompts[-turns]})
        except ServerError as exc:
            await self._warn(f"opencode refused the rollback: {exc.message}")
        except (KeyError, TypeError):
            await self._warn("opencode answered the message list in an unexpected shape")

    async def _summarize(self) -> None:
        model = self._settings.model_ref()
        if model is None:
            await self._end_turn(Failed(message="compaction needs a model (`provider/id`)"))
            return
        body = {"providerID": model["providerID"], "modelID": model["modelID"]}
        try:
            await self._server.post(f"/session/{self._settings.session_id}/summarize", body, seconds=SUMMARIZE_TIMEOUT)
        except ServerError as exc:
            await self._end_turn(Failed(message=exc.message))

    # --- events --------------------------------------------------------------------------------------------

    async def pump(self) -> None:
        """Carry the server's events into the session until the stream ends."""
        try:
            async for event in self._server.events():
                if event.get("type") == "server.connected":
                    self.connected.set()
                    continue
                await self._apply(self.mapper.map(event))
        except ServerError:
            pass
        if not self._closing:
            await self._report_exit("event stream ended")

    async def _apply(self, signals: Signals) -> None:
        for event in signals.events:
            await self._events.send(event)
        if signals.session is not None:
            await self._session_changed(signals.session)
        if signals.error is not None and self._turn_open:
            self._error = None if signals.aborted else signals.error
            self._cancelled = self._cancelled or signals.aborted
        if signals.reply_ended and self._turn_open:
            self._limit = signals.limit
        if signals.busy:
            self._admitted.set()
        if signals.idle and self._turn_open:
            stop: StopReason = Completed(limit=self._limit)
            if self._cancelled:
                stop = Cancelled()
            elif self._error is not None:
                stop = Failed(message=self._error)
            await self._end_turn(stop)

    async def _session_changed(self, info: Mapping[str, Any]) -> None:
        title = real_title(info.get("title"))
        if title is not None and title != self._settings.title:
            self._settings.title = title
            await self._events.send(d.InfoChanged(self.info))

    async def _end_turn(self, stop: StopReason) -> None:
        if not self._turn_open:
            return
        self._turn_open = False
        await self._events.send(d.TurnStopped(stop))

    async def _watch_exit(self) -> None:
        await self._server.child.wait()
        if not self._closing:
            await self._report_exit()

    async def _report_exit(self, fallback: str | None = None) -> None:
        """Report the server's end once: its exit status, or `fallback` when the event stream ended and the server
        is still running STREAM_END_GRACE later. A dying server usually drops the stream before it is reaped."""
        if self._exit_reported:
            return
        self._exit_reported = True
        child = self._server.child
        try:
            async with asyncio.timeout(None if fallback is None else STREAM_END_GRACE):
                status = str(await child.wait())
        except TimeoutError:
            assert fallback is not None
            status = fallback
        tail = [line for line in child.stderr_tail() if line.strip()][-STDERR_TAIL:]
        await self._events.send(d.Exited(status, "\n".join(tail)))
        self._events.close()

    # --- plumbing ------------------------------------------------------------------------------------------

    async def _warn(self, message: str) -> None:
        diagnostic = Diagnostic(level=DiagnosticLevel.WARNING, message=message)
        await self._events.send(d.AdapterEvent(DiagnosticEvent(diagnostic=diagnostic)))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        assert self.group is not None
        task = self.group.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


def _is_prompt(message: Mapping[str, Any]) -> bool:
    """A user message the caller sent (not the marker opencode adds when it compacts)."""
    parts = message.get("parts") or []
    return message["info"].get("role") == "user" and not any(p.get("type") == "compaction" for p in parts)


async def _parts(prompt: d.PromptInput) -> list[dict[str, Any]]:
    """The prompt's text (naming every attachment), then each image attachment inline as a data URL."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": prompt_text(prompt)}]
    for path in prompt.attachments:
        mime = mimetypes.guess_type(path)[0] or ""
        if not mime.startswith("image/"):
            continue
        with suppress(OSError):
            data = await asyncio.to_thread(Path(path).read_bytes)
            if len(data) <= INLINE_ATTACHMENT_CAP:
                url = f"data:{mime};base64,{base64.b64encode(data).decode()}"
                parts.append({"type": "file", "mime": mime, "url": url, "filename": Path(path).name})
    return parts

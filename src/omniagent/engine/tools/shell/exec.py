"""The `exec` tool: one shell command in the workspace, output streamed live, bounded in time and size.

The tool reads the model's arguments (the command, a timeout within the session's bounds), runs the command through
the sandbox layer (`omniagent.sandbox.run_command`: under the session's `SandboxPolicy`, in the sandbox unless the
session opted out, stopped at its timeout or at a limit), streams its output live up to `stream_output_cap`, and
gives the model the result: the output's head and tail (`exec_output_cap`), then how it ended (the exit code, the
signal, the timeout or the limit hit), with a note on the sandbox's rules when a sandboxed command failed and, in the
allowlist mode, one line per network request the proxy refused. Whether the call may run at all is the engine's
permission step (engine/interactions/permissions.py), before this.
"""

from __future__ import annotations

import codecs
import signal
from collections.abc import Mapping
from pathlib import Path

from omniagent.engine.tools.args import optional_number, required_str
from omniagent.engine.tools.context import OutputSink, ToolContext, ToolError, ToolLimits, ToolResult, guarded
from omniagent.engine.tools.views import TextView
from omniagent.sandbox import Outcome, SandboxPolicy, SandboxUnavailable, run_command

__all__ = ["ExecTool"]

# Appended to a failed sandboxed command's result, so the model knows why a path or the network was refused.
SANDBOX_NOTE = (
    "[the command ran in the exec sandbox: only the workspace and /tmp (and /dev/shm, /run) are writable, "
    "omniagent's data and credential directories are hidden, other processes are invisible, the network is off "
    "or limited to the domains the user allowed (through the proxy in HTTPS_PROXY) unless the user turned it on, "
    'some system calls are refused ("Operation not permitted": new namespaces, ptrace, Unix sockets), and '
    "processes, memory, CPU time, output and file sizes are limited; this is the user's policy, not a fault to "
    "work around]"
)


class ExecTool:
    """Run a shell command in the workspace root."""

    name = "exec"
    description = (
        "Run a shell command (/bin/sh -c) in the workspace root. stdout and stderr are combined; stdin is empty. "
        "The command is killed after `timeout` seconds (default 120). Long output keeps its beginning and end. "
        "Unless the user turned it off, it runs in a sandbox: only the workspace and /tmp are writable, "
        "credential directories are hidden, other processes are invisible, the network is off or limited to the "
        "domains the user allowed (through the proxy the environment names), new namespaces, ptrace and Unix "
        "sockets are refused, and processes, memory, CPU time and output are limited."
    )
    input_schema: Mapping[str, object] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The shell command line to run."},
            "timeout": {"type": "number", "exclusiveMinimum": 0, "description": "Seconds before it is killed."},
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    async def run(self, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        """Run the command; a non-zero exit or a timeout gives an error result carrying the output."""

        async def body() -> ToolResult:
            command = required_str(args, "command")
            if "\x00" in command:
                raise ToolError("the command contains a NUL byte")
            asked = optional_number(args, "timeout", minimum=0.0)
            timeout = min(asked or ctx.limits.exec_timeout, ctx.limits.exec_max_timeout)
            try:
                outcome = await _run(command, ctx.root, timeout, ctx.limits, ctx.on_output, ctx.sandbox)
            except SandboxUnavailable as exc:
                raise ToolError(str(exc)) from None
            if outcome.sandbox_failed:
                why = f"the command was not run: the exec sandbox could not start: {outcome.output.strip()}"
                raise ToolError(f"{why}\n{outcome.limit}" if outcome.limit else why)
            return _result(command, timeout, outcome, sandboxed=ctx.sandbox.mode == "sandboxed")

        return await guarded(ctx.root, body)


async def _run(
    command: str, cwd: Path, seconds: float, limits: ToolLimits, on_output: OutputSink, policy: SandboxPolicy
) -> Outcome:
    """Run `command` for at most `seconds`, streaming its output live to `on_output` (up to `stream_output_cap`).

    Raises:
        SandboxUnavailable: the policy asks for the sandbox and it cannot start here, or its limits cannot be
            applied, or sandbox.json is invalid (`ExecLimits.refused`).
    """
    return await run_command(
        command,
        cwd,
        policy,
        seconds=seconds,
        on_output=_LiveOutput(limits.stream_output_cap, on_output).feed,
        kept_bytes=limits.exec_output_cap,
        kill_grace=limits.kill_grace,
        drain_grace=limits.drain_grace,
    )


class _LiveOutput:
    """Streams a capped prefix of the output live, decoded in order (a character split between chunks stays whole)."""

    def __init__(self, cap: int, on_output: OutputSink) -> None:
        self._cap = cap
        self._on_output = on_output
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._total = 0
        self._stopped = False

    def feed(self, data: bytes) -> None:
        if self._stopped:
            return
        room = self._cap - self._total
        self._total += len(data)
        if len(data) <= room:
            self._emit(self._decoder.decode(data))
            return
        self._emit(self._decoder.decode(data[:room], final=True))
        self._emit(f"\n[live output stops after {self._cap} bytes; the command goes on]\n")
        self._stopped = True

    def _emit(self, text: str) -> None:
        if text:
            self._on_output(text)


def _result(command: str, timeout: float, outcome: Outcome, *, sandboxed: bool) -> ToolResult:
    body = outcome.output.rstrip("\n")
    if outcome.limit is not None:
        status = outcome.limit
    elif outcome.timed_out:
        status = f"[timed out after {timeout:g} s; the command and its children were killed]"
    elif outcome.returncode is not None and outcome.returncode < 0:
        status = f"[killed by signal {_signal_name(-outcome.returncode)}]"
    else:
        status = f"[exit code {outcome.returncode}]"
    failed = outcome.timed_out or outcome.returncode != 0 or outcome.limit is not None
    if failed and sandboxed:
        status += f"\n{SANDBOX_NOTE}"
    status = "\n".join((*outcome.network, status))
    text = f"{body}\n{status}" if body else f"(no output)\n{status}"
    view = TextView(text=f"$ {command}\n{text}", language="console")
    return ToolResult(output=text, is_error=failed, views=(view,))


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)

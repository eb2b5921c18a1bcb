"""What `omniagent batch` shows: a live view while it runs (rich, on a terminal) and the summary table at the end.

The live view: counts (done, running, failed, timed out, queued), elapsed time, tokens and cost where the agents
report them, and one row per running task with its elapsed time and the last line it produced. Off a terminal,
one line per finished run instead: always one line, whatever the run's error holds (an agent's stderr has many).
"""

from __future__ import annotations

import re
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from omniagent.batch.evaluation.metrics import binary, pass_at, verified
from omniagent.batch.execute import RunSpec
from omniagent.batch.results import Status, TaskResult, trial_name

_LINE = 60  # characters of a running task's last line
_NO_LIMIT = 1_000_000  # columns: a width no table reaches
_BREAK = " ⏎ "  # where a line break was, in a run's one-line account
# Control characters left once the text is split into lines (escape sequences, NUL, C1): shown escaped, not sent.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass(slots=True)
class _Running:
    started: float
    line: str = ""
    text: str = ""
    tokens: int | None = None
    cost: float | None = None


@dataclass(slots=True)
class _Counts:
    total: int = 0
    by_status: dict[Status, int] = field(default_factory=dict)
    cost: float = 0.0
    tokens: int = 0


class ProgressView:
    """An `Observer` that draws the batch. Use as a context manager around the run."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._started = time.monotonic()
        self._running: dict[tuple[str, str, int], _Running] = {}
        self._counts = _Counts()
        self._live = Live(console=console, refresh_per_second=4, transient=False, get_renderable=self._render)

    def __enter__(self) -> ProgressView:
        if self._console.is_terminal:
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live.is_started:
            self._live.stop()

    # --- Observer ----------------------------------------------------------------------------------------------

    def planned(self, total: int, already_done: list[TaskResult]) -> None:
        self._counts.total = total
        for result in already_done:
            self._count(result)
        if already_done:
            self._console.print(f"resuming: {len(already_done)} of {total} runs already done", style="dim")

    def started(self, spec: RunSpec) -> None:
        self._running[spec.key] = _Running(time.monotonic())

    def event(self, spec: RunSpec, event: dict[str, Any]) -> None:
        state = self._running.get(spec.key)
        if state is None:
            return
        ((tag, body),) = event["kind"].items() if isinstance(event["kind"], dict) else ((event["kind"], None),)
        if tag == "TextDelta" and isinstance(body, dict):
            state.text = (state.text + str(body.get("text", "")))[-400:]
            lines = [line for line in state.text.splitlines() if line.strip()]
            state.line = lines[-1] if lines else state.line
        elif tag == "MessageEnded":
            state.text = ""
        elif tag == "ToolUpdated" and isinstance(body, dict):
            state.line = f"▸ {body.get('title', '')}"
        elif tag == "ContextUsage" and isinstance(body, dict):
            state.tokens = body.get("used_tokens")
            state.cost = body.get("cost_usd")

    def finished(self, result: TaskResult) -> None:
        self._running.pop(result.key, None)
        if result.status is Status.INTERRUPTED:
            return
        self._count(result)
        if not self._live.is_started:
            detail = f": {one_line(result.error)}" if result.error else ""
            who = trial_name(result.agent, result.trial)
            self._console.print(
                f"{result.task} [{who}] {result.status.value} in {result.timings.total_seconds:.1f}s{detail}",
                markup=False,
                highlight=False,
            )

    # --- drawing -----------------------------------------------------------------------------------------------

    def _count(self, result: TaskResult) -> None:
        counts = self._counts
        counts.by_status[result.status] = counts.by_status.get(result.status, 0) + 1
        counts.cost += result.usage.cost_usd or 0.0
        counts.tokens += result.usage.context_tokens or 0

    def _render(self) -> RenderableType:
        # Called from rich's refresh thread: take snapshots (one C-level copy each) before iterating.
        running = list(self._running.items())
        counts = self._counts
        done = sum(counts.by_status.values())
        failed = counts.by_status.get(Status.FAILED, 0) + counts.by_status.get(Status.TURN_LIMIT, 0)
        queued = max(counts.total - done - len(running), 0)
        header = Text.assemble(
            ("done ", "bold"),
            (f"{done}/{counts.total}", "green"),
            "  running ",
            (str(len(running)), "cyan"),
            "  failed ",
            (str(failed), "red" if failed else ""),
            "  timed out ",
            (str(counts.by_status.get(Status.TIMED_OUT, 0)), ""),
            f"  queued {queued}  elapsed {_clock(time.monotonic() - self._started)}",
            f"  tokens {_tokens(counts.tokens + sum(state.tokens or 0 for _, state in running))}",
            f"  cost ${counts.cost + sum(state.cost or 0.0 for _, state in running):.4f}",
        )
        table = Table(box=None, pad_edge=False, show_header=bool(running))
        for column in ("task", "agent", "elapsed", "tokens", "cost", "last line"):
            table.add_column(column, no_wrap=True, overflow="ellipsis", style="dim" if column == "last line" else "")
        now = time.monotonic()
        for (task, agent, trial), state in running:
            table.add_row(
                task,
                trial_name(agent, trial),
                _clock(now - state.started),
                _tokens(state.tokens) if state.tokens is not None else "-",
                f"${state.cost:.4f}" if state.cost is not None else "-",
                state.line[:_LINE],
            )
        return Group(header, table)


def one_line(text: str) -> str:
    """`text` as one line: its non-blank lines joined by ` ⏎ `, tabs made spaces, other control characters escaped
    (`\\x1b`), so a log keeps one line per run."""
    lines = (line.strip() for line in text.replace("\t", " ").splitlines())
    joined = _BREAK.join(line for line in lines if line)
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", joined)


def print_summary(console: Console, results: list[TaskResult]) -> None:
    """The summary table on `console`. Off a terminal (a pipe, a log) it is printed as wide as it needs, so no agent
    id or header is cut or wrapped to fit 80 columns."""
    table = summary_table(results)
    if not console.is_terminal:
        unbounded = console.options.update_width(_NO_LIMIT)  # measured within the console's width, it would fit
        console.width = max(console.width, console.measure(table, options=unbounded).maximum)
    console.print(table)


def summary_table(results: list[TaskResult]) -> Table:
    """Per agent: completed, failed, timed out, median time and total cost (the table `batch` prints at the end), and
    the mean reward over all its runs when any run was verified (a run without a reward counts 0); with more than one
    trial per task and 0/1 rewards, pass@1 and pass@k for the most trials every task has (job.json has every k)."""
    table = Table(title="omniagent batch", title_justify="left")
    checked = verified(results)
    passes = {agent: _passes([r for r in results if r.agent == agent]) for agent in {r.agent for r in results}}
    widest = max((len(p) for p in passes.values()), default=0)
    ks = ["1", str(widest)] if widest > 1 else []
    columns = ["agent", "runs", "completed", "failed", "timed out", "median time", "total cost"]
    for column in columns + (["mean reward"] if checked else []) + [f"pass@{k}" for k in ks]:
        table.add_column(column, justify="left" if column == "agent" else "right")
    for agent in dict.fromkeys(result.agent for result in results):
        mine = [result for result in results if result.agent == agent]
        by = {status: sum(1 for r in mine if r.status is status) for status in Status}
        costs = [r.usage.cost_usd for r in mine if r.usage.cost_usd is not None]
        row = [
            agent,
            str(len(mine)),
            str(by[Status.COMPLETED]),
            str(by[Status.FAILED] + by[Status.TURN_LIMIT]),
            str(by[Status.TIMED_OUT]),
            f"{statistics.median(r.timings.total_seconds for r in mine):.1f}s",
            f"${sum(costs):.4f}" if costs else "-",
        ]
        if checked:
            row.append(f"{statistics.fmean(r.reward for r in mine):.3f}")
        row += [f"{passes[agent][k]:.3f}" if k in passes[agent] else "-" for k in ks]
        table.add_row(*row)
    return table


def _passes(mine: list[TaskResult]) -> dict[str, float]:
    return pass_at(mine) if verified(mine) and binary(mine) else {}


def _clock(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}:{rest:02d}"


def _tokens(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)

"""`OUT/report.html`: the job's result as one page to read in a browser, written beside `job.json` at the end of every
batch. Built from `job.json` (read through job.py) and the trials in `results.jsonl`: the job and its options, per
agent the mean reward with its 95% interval (confidence.py), pass@k, errors, tokens, cost and time, the agent by task
matrix of rewards linking each trial's files, cost and time as bars, and every trial.

The page stands alone offline: inline CSS and SVG, no script, nothing fetched (its Content-Security-Policy forbids
it too). Every text from a task, an agent or a result is escaped: agent output may hold markup.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from omniagent.batch.evaluation import job
from omniagent.batch.evaluation.confidence import mean_interval
from omniagent.batch.results import ResultsFile, Status, TaskResult, run_dir, trial_name

REPORT = "report.html"
TRIAL_FILES = {"trajectory": "trajectory.json", "diff": "diff.patch", "result": "result.json", "events": "events.jsonl"}
PREVIEW = 300  # characters of an error or a final message shown in the trials table (result.json has them whole)

Key = tuple[str, str, int]

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em 2em; color: #1d1d1f; }
h1 { margin-bottom: 0.1em; } h2 { margin-top: 1.8em; border-bottom: 1px solid #ddd; }
.muted { color: #666; } .state { font-weight: 600; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { border: 1px solid #ddd; padding: 0.3em 0.55em; text-align: left; vertical-align: top; }
th { background: #f4f4f6; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.trials { list-style: none; margin: 0; padding: 0; }
.trial { margin: 2px 0; padding: 1px 5px; border-radius: 4px; white-space: nowrap; }
.score { display: inline-block; min-width: 3.2em; font-weight: 600; }
.trial a { margin-left: 0.35em; font-size: 0.85em; }
.mean { font-weight: 600; margin-bottom: 2px; }
.text { max-width: 48em; white-space: pre-wrap; word-break: break-word; font-size: 0.9em; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.1em 1em; } dt { color: #666; } dd { margin: 0; }
svg text { font: 12px system-ui, sans-serif; }
"""


def write(out: Path, planned: Sequence[Key] = (), *, now: datetime | None = None) -> None:
    """`OUT/report.html` from `OUT/job.json` and `OUT/results.jsonl`, replaced whole. `planned`: the job's trials in
    plan order (the matrix's order; a planned trial without a result shows as not run); empty: the trials with a
    result. Raises `OSError`, `ValueError` (job.json unreadable), `ResultsFileError`."""
    finished = ResultsFile(out).finished()
    order = list(planned) or sorted(finished)
    page = render(out, job.read(out), order, finished, now or datetime.now(UTC))
    job.write_whole(out / REPORT, page)


def render(
    out: Path, summary: dict[str, Any], order: Sequence[Key], finished: dict[Key, TaskResult], now: datetime
) -> str:
    """The page: `summary` is job.json's content; `order` the trials shown, `finished` their results (by key)."""
    trials = [finished[key] for key in order if key in finished]
    agents = list(dict.fromkeys(agent for _, agent, _ in order))
    sections = [
        _header(summary, now),
        _agents(summary, agents, trials),
        _charts(summary, agents),
        _matrix(out, order, finished),
        _trials(trials),
    ]
    return (
        "<!DOCTYPE html>\n<html lang=en>\n<head>\n<meta charset=utf-8>\n"
        "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
        f"<title>omniagent batch report</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        + "\n".join(sections)
        + "\n</body>\n</html>\n"
    )


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _fixed(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _short(value: float) -> str:
    """A reward as few digits as it needs: 1, 0.5, 0.333."""
    return f"{value:.3f}".rstrip("0").rstrip(".")


def _header(summary: dict[str, Any], now: datetime) -> str:
    state = "stopped" if summary.get("stopped") else "complete" if summary.get("complete") else "incomplete"
    options = "".join(
        f"<dt>{_e(name)}</dt><dd>{_e(json.dumps(value))}</dd>" for name, value in summary.get("options", {}).items()
    )
    return (
        "<header>\n<h1>omniagent batch report</h1>\n"
        f"<p class=muted>generated {_e(now.strftime('%Y-%m-%d %H:%M:%S %Z'))}</p>\n"
        f"<p id=job><span id=finished>{_e(summary.get('finished'))}</span> of "
        f"<span id=planned>{_e(summary.get('planned'))}</span> planned trials finished: "
        f"<span class=state id=state>{_e(state)}</span></p>\n"
        f"<dl id=options>{options}</dl>\n</header>"
    )


def _agents(summary: dict[str, Any], agents: Sequence[str], trials: Sequence[TaskResult]) -> str:
    metrics = summary.get("agents", {})
    ks = sorted({k for m in metrics.values() for k in (m.get("pass_at_k") or {})}, key=int)
    head = ["agent", "trials", "completed", "mean reward", "95% CI", *(f"pass@{k}" for k in ks)]
    head += ["errors", "context tokens", "cost (USD)", "median time"]
    rows, notes = [], []
    for agent in agents:
        mine = metrics.get(agent)
        if mine is None:
            rows.append(f"<tr><th>{_e(agent)}</th><td colspan={len(head) - 1}>no trial finished</td></tr>")
            continue
        rows.append(_agent_row(agent, mine, [r for r in trials if r.agent == agent], ks))
        if mine.get("pass_at_k") is None and mine.get("pass_at_k_absent"):
            notes.append(f"<li>{_e(agent)}: no pass@k: {_e(mine['pass_at_k_absent'])}</li>")
    return (
        "<section>\n<h2>Agents</h2>\n"
        + _table("agents", head, rows)
        + (f"<ul class=muted>{''.join(notes)}</ul>\n" if notes else "")
        + "<p class=muted>Mean reward: over the agent's trials, a trial without a reward counting 0. 95% CI: the "
        "Wilson score interval when every reward is 0 or 1, else the normal approximation (mean ± 1.96·s/√n); "
        "each trial counts as an independent draw. pass@k: the unbiased estimator, averaged over the tasks.</p>\n"
        "</section>"
    )


def _agent_row(agent: str, mine: dict[str, Any], trials: Sequence[TaskResult], ks: Sequence[str]) -> str:
    interval = mean_interval([r.reward for r in trials]) if mine.get("mean_reward") is not None else None
    ci = "—" if interval is None else f"[{interval.low:.3f}, {interval.high:.3f}] {interval.method}"
    passes = mine.get("pass_at_k") or {}
    cost = mine.get("cost_usd")
    median = mine.get("median_seconds")
    cells = [
        ("trials", mine.get("trials")),
        ("completed", mine.get("completed")),
        ("mean", _fixed(mine.get("mean_reward"))),
        ("ci", ci),
        *((f"pass{k}", _fixed(passes.get(k))) for k in ks),
        ("errors", _errors(mine.get("errors", {}))),
        ("tokens", f"{mine.get('context_tokens') or 0:,}"),
        ("cost", "—" if cost is None else f"{cost:.4f}"),
        ("median", "—" if median is None else f"{median:.2f} s"),
    ]
    return (
        f"<tr data-agent={_attr(agent)}><th>{_e(agent)}</th>"
        + "".join(f"<td class=num data-col={name}>{_e(value)}</td>" for name, value in cells)
        + "</tr>"
    )


def _attr(value: str) -> str:
    return f'"{_e(value)}"'


def _errors(errors: dict[str, Any]) -> str:
    """`by_status`, `by_kind`, the verifier errors and the retries in a line; "none" when nothing went wrong."""
    parts = [f"{name} {count}" for name, count in {**errors.get("by_status", {}), **errors.get("by_kind", {})}.items()]
    if errors.get("verifier_errors"):
        parts.append(f"verifier errors {errors['verifier_errors']}")
    if errors.get("retried"):
        parts.append(f"retried {errors['retried']}")
    return " · ".join(parts) or "none"


def _charts(summary: dict[str, Any], agents: Sequence[str]) -> str:
    metrics = summary.get("agents", {})
    costs = [(agent, metrics.get(agent, {}).get("cost_usd")) for agent in agents]
    times = [(agent, metrics.get(agent, {}).get("seconds")) for agent in agents]
    return (
        "<section>\n<h2>Cost and time</h2>\n"
        + _bars("cost", "Cost per agent (USD, all its trials)", costs, lambda v: f"${v:.4f}")
        + _bars("time", "Time per agent (seconds, all its trials summed)", times, lambda v: f"{v:.1f} s")
        + "</section>"
    )


def _bars(name: str, title: str, rows: Sequence[tuple[str, float | None]], label: Any) -> str:
    """A horizontal bar chart as inline SVG: one bar per agent, its value written after it ("not reported" where
    there is none)."""
    left, width, step = 180, 360, 26
    top = max((value for _, value in rows if value is not None), default=0.0) or 1.0
    shapes = []
    for i, (agent, value) in enumerate(rows):
        y = 8 + i * step
        shown = agent if len(agent) <= 26 else agent[:25] + "…"
        name = f"<title>{_e(agent)}</title>{_e(shown)}"
        shapes.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">{name}</text>')
        if value is None:
            shapes.append(f'<text x="{left}" y="{y + 15}" fill="#888">not reported</text>')
            continue
        length = max(1.0, width * value / top) if value > 0 else 0.0
        shapes.append(f'<rect x="{left}" y="{y}" width="{length:.1f}" height="20" fill="#4c78a8"/>')
        shapes.append(f'<text x="{left + length + 6:.1f}" y="{y + 15}">{_e(label(value))}</text>')
    height = 16 + len(rows) * step
    return (
        f"<figure>\n<figcaption>{_e(title)}</figcaption>\n"
        f'<svg id="chart-{name}" role="img" width="{left + width + 110}" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg">{"".join(shapes)}</svg>\n</figure>\n'
    )


def _matrix(out: Path, order: Sequence[Key], finished: dict[Key, TaskResult]) -> str:
    tasks = list(dict.fromkeys(task for task, _, _ in order))
    agents = list(dict.fromkeys(agent for _, agent, _ in order))
    cells: dict[tuple[str, str], list[Key]] = {}
    for key in order:
        cells.setdefault(key[:2], []).append(key)
    rows = []
    for task in tasks:
        row = [f"<th>{_e(task)}</th>"]
        for agent in agents:
            keys = cells.get((task, agent), [])
            row.append(_cell(out, task, agent, keys, finished) if keys else "<td></td>")
        rows.append("<tr>" + "".join(row) + "</tr>")
    return (
        "<section>\n<h2>Rewards by task and agent</h2>\n"
        "<p class=muted>Each trial: its reward (colour: red 0 to green 1), or its status when it has none, and its "
        "files. The mean over a cell's trials above them.</p>\n<table id=matrix>\n<tr><th>task</th>"
        + "".join(f"<th>{_e(agent)}</th>" for agent in agents)
        + "</tr>\n"
        + "\n".join(rows)
        + "\n</table>\n</section>"
    )


def _cell(out: Path, task: str, agent: str, keys: Sequence[Key], finished: dict[Key, TaskResult]) -> str:
    """One (task, agent) cell: the mean reward of its trials (when more than one has a verifier), then each trial."""
    results = [finished[key] for key in keys if key in finished]
    checked = [r for r in results if r.verifier is not None or r.rewards is not None]
    mean = ""
    if len(keys) > 1 and checked:
        mean = f"<div class=mean>mean {_short(sum(r.reward for r in results) / len(results))}</div>"
    items = "".join(_trial(out, key, finished.get(key)) for key in keys)
    return f"<td data-task={_attr(task)} data-agent={_attr(agent)}>{mean}<ul class=trials>{items}</ul></td>"


def _trial(out: Path, key: Key, result: TaskResult | None) -> str:
    """One trial in its cell: its number, its reward or its status, the links to its files; why it has no reward in
    the tooltip."""
    task, agent, trial = key
    if result is None:
        return _chip(trial, "#f0f0f0", "not run", "no result: the job ended before this trial ran", "")
    if result.rewards is not None:
        score, colour = _short(result.reward), _colour(result.reward)
    else:
        unscored = result.verifier is not None and result.status is Status.COMPLETED
        score, colour = ("no reward" if unscored else result.status.value), "#e4e4e4"
    why = result.error or (result.verifier.error if result.verifier is not None else None) or result.status.value
    directory = run_dir(out, task, agent, trial)
    links = "".join(
        f' <a href="{_e(_href(task, agent, trial, name))}" title="{_e(name)}">{_e(label)}</a>'
        for label, name in TRIAL_FILES.items()
        if (directory / name).is_file()
    )
    return _chip(trial, colour, score, why, links)


def _chip(trial: int, colour: str, score: str, why: str, links: str) -> str:
    return (
        f'<li class=trial data-trial="{trial}" style="background:{colour}" title="{_e(why)}">'
        f"#{trial} <span class=score>{_e(score)}</span>{links}</li>"
    )


def _href(task: str, agent: str, trial: int, name: str) -> str:
    """A trial's file relative to OUT, as a URL path (each part quoted: `@` and the like stay literal)."""
    return "/".join(quote(part, safe="@") for part in ("tasks", task, trial_name(agent, trial), name))


def _colour(reward: float) -> str:
    """Red at 0 through yellow to green at 1 (a reward outside [0, 1] takes the nearer end)."""
    return f"hsl({120 * min(1.0, max(0.0, reward)):.0f}, 70%, 82%)"


def _trials(trials: Iterable[TaskResult]) -> str:
    head = ["task", "agent", "trial", "status", "reward", "seconds", "where", "error, else the final message"]
    rows = []
    for r in trials:
        reward = _short(r.reward) if r.rewards is not None else "—"
        text = r.error or (r.verifier.error if r.verifier is not None and r.verifier.error else None) or r.text
        shown = text if len(text) <= PREVIEW else text[:PREVIEW] + "…"
        kind = f"{r.error_kind.value}: " if r.error_kind is not None else ""
        cells = [r.task, r.agent, r.trial, r.status.value, reward, f"{r.timings.total_seconds:.2f}", r.where]
        rows.append(
            "<tr>"
            + "".join(f"<td>{_e(cell)}</td>" for cell in cells)
            + f"<td class=text>{_e(kind)}{_e(shown)}</td></tr>"
        )
    return "<section>\n<h2>Trials</h2>\n" + _table("trials", head, rows) + "</section>"


def _table(table_id: str, head: Sequence[str], rows: Sequence[str]) -> str:
    """A table with a header row of `head` (escaped here) and `rows`, already made (and escaped) by the caller."""
    return (
        f"<table id={table_id}>\n<tr>"
        + "".join(f"<th>{_e(name)}</th>" for name in head)
        + "</tr>\n"
        + "\n".join(rows)
        + "\n</table>\n"
    )

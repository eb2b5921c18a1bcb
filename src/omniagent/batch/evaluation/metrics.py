"""The job's metrics, from its trials' results: pure functions, no I/O (`results.write_job` writes `job.json`).

Per agent: trials and their statuses, the mean reward (a trial without a reward counts 0), reward statistics, pass@k
with the unbiased estimator when every reward is 0 or 1, errors by kind, tokens, cost and time; and the job's totals.
Not the progress view's running counts (progress.py), which count as runs finish.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from math import comb
from typing import Any

from omniagent.batch.results import Status, TaskResult


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimator of pass@k for one task (Chen et al., 2021): the chance that at least one of k trials
    drawn without replacement from n, of which c passed, passed: 1 - C(n-c, k) / C(n, k). Needs 1 <= k <= n."""
    if not 1 <= k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n and 0 <= c <= n (n={n}, c={c}, k={k})")
    return 1.0 - comb(n - c, k) / comb(n, k)


def verified(results: Iterable[TaskResult]) -> bool:
    """Whether any of `results` had a verifier (without one, a reward means nothing)."""
    return any(r.verifier is not None or r.rewards is not None for r in results)


def binary(results: Iterable[TaskResult]) -> bool:
    """Whether every reward is 0 or 1 (a missing one counts 0), so pass@k means something."""
    return all(r.reward in (0.0, 1.0) for r in results)


def pass_at(results: Sequence[TaskResult]) -> dict[str, float]:
    """pass@k for k = 1 .. the fewest trials any task has, each averaged over the tasks; `{"1": …, "2": …}`.
    Call only where `binary(results)`."""
    by_task: dict[str, list[TaskResult]] = {}
    for result in results:
        by_task.setdefault(result.task, []).append(result)
    if not by_task:
        return {}
    fewest = min(len(trials) for trials in by_task.values())
    tallies = [(len(trials), sum(1 for r in trials if r.reward == 1.0)) for trials in by_task.values()]
    return {str(k): statistics.fmean(pass_at_k(n, c, k) for n, c in tallies) for k in range(1, fewest + 1)}


def reward_stats(results: Sequence[TaskResult]) -> dict[str, Any]:
    """Mean, population standard deviation, min and max of the trials' rewards (a missing one counts 0), and how
    many trials scored each value when every reward is 0 or 1."""
    rewards = [r.reward for r in results]
    stats: dict[str, Any] = {
        "mean": statistics.fmean(rewards),
        "stdev": statistics.pstdev(rewards),
        "min": min(rewards),
        "max": max(rewards),
        "missing": sum(1 for r in results if not r.rewards),
    }
    if binary(results):
        stats["counts"] = {"0": rewards.count(0.0), "1": rewards.count(1.0)}
    return stats


def errors(results: Sequence[TaskResult]) -> dict[str, Any]:
    """What went wrong, by kind: the statuses other than completed, the error kinds (`ErrorKind`), the verifier
    errors, and the infrastructure failures that were retried."""
    return {
        "by_status": dict(Counter(r.status.value for r in results if r.status is not Status.COMPLETED)),
        "by_kind": dict(Counter(r.error_kind.value for r in results if r.error_kind is not None)),
        "verifier_errors": sum(1 for r in results if r.verifier is not None and r.verifier.error is not None),
        "retried": sum(len(r.retried) for r in results),
    }


def spending(results: Sequence[TaskResult]) -> dict[str, Any]:
    """Tokens (each trial's last context size, as the agent reported it, summed), cost (null when no trial reported
    one) and time (the trials' seconds summed, and their median)."""
    costs = [r.usage.cost_usd for r in results if r.usage.cost_usd is not None]
    seconds = [r.timings.total_seconds for r in results]
    return {
        "context_tokens": sum(r.usage.context_tokens or 0 for r in results),
        "cost_usd": sum(costs) if costs else None,
        "seconds": round(sum(seconds), 3),
        "median_seconds": statistics.median(seconds) if seconds else None,
    }


def agent_metrics(results: Sequence[TaskResult]) -> dict[str, Any]:
    """One agent's metrics over its trials (see the module docstring)."""
    metrics: dict[str, Any] = {
        "trials": len(results),
        "tasks": len({r.task for r in results}),
        "completed": sum(1 for r in results if r.status is Status.COMPLETED),
        "mean_reward": None,
        "rewards": None,
        "pass_at_k": None,
        "pass_at_k_absent": None,
    }
    if not results:
        metrics["pass_at_k_absent"] = "no trial finished"
    elif not verified(results):
        metrics["pass_at_k_absent"] = "no trial was verified (the tasks have no verifier)"
    else:
        stats = reward_stats(results)
        metrics["mean_reward"], metrics["rewards"] = stats["mean"], stats
        if binary(results):
            metrics["pass_at_k"] = pass_at(results)
        else:
            odd = next(r.reward for r in results if r.reward not in (0.0, 1.0))
            metrics["pass_at_k_absent"] = f"not every reward is 0 or 1 (one is {odd:g})"
    return metrics | {"errors": errors(results)} | spending(results)


def job_metrics(results: Sequence[TaskResult]) -> dict[str, Any]:
    """The job's metrics: per agent (in the order agents first appear) and the totals over every trial. Pass each
    trial once (`ResultsFile.finished()` is keyed by trial, so resumes and retries never count one twice)."""
    agents = list(dict.fromkeys(r.agent for r in results))
    return {
        "agents": {agent: agent_metrics([r for r in results if r.agent == agent]) for agent in agents},
        "totals": {
            "trials": len(results),
            "completed": sum(1 for r in results if r.status is Status.COMPLETED),
            "errors": errors(results),
        }
        | spending(results),
    }

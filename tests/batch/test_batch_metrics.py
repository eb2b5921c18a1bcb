"""The job's metrics (`omniagent.batch.metrics`) on results built by hand: pass@k against values worked out on
paper, reward statistics with a missing reward counting 0, errors by kind, tokens and cost."""

from __future__ import annotations

import msgspec
import pytest

from omniagent.batch.evaluation.metrics import agent_metrics, job_metrics, pass_at_k
from omniagent.batch.results import ErrorKind, Status, TaskResult, Timings, Usage, VerifierInfo


def _trial(task: str, trial: int, reward: float | None, **extra: object) -> TaskResult:
    fields: dict[str, object] = {
        "task": task,
        "agent": "a",
        "trial": trial,
        "status": Status.COMPLETED,
        "timings": Timings(started_at=0.0, total_seconds=2.0),
        "verifier": VerifierInfo(exit_code=0, error=None if reward is not None else "no reward file"),
        "rewards": None if reward is None else {"reward": reward},
    }
    return TaskResult(**(fields | extra))  # type: ignore[arg-type]


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    """n=5 trials, c=2 passed: pass@k = 1 - C(3,k)/C(5,k): 1-3/5, 1-3/10, 1-1/10, then 1 (fewer than k fail)."""
    assert [pass_at_k(5, 2, k) for k in range(1, 6)] == pytest.approx([0.4, 0.7, 0.9, 1.0, 1.0])
    assert pass_at_k(5, 0, 3) == 0.0 and pass_at_k(5, 5, 1) == 1.0
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def test_an_agents_metrics_average_pass_at_k_over_tasks_and_count_a_missing_reward_as_0() -> None:
    """Task x: 2 of 5 pass (one trial without a reward); task y: 5 of 5. pass@k is the mean of the two tasks'."""
    x = [_trial("x", i, r) for i, r in enumerate([1.0, 0.0, None, 1.0, 0.0], start=1)]
    y = [_trial("y", i, 1.0, usage=Usage(context_tokens=100, cost_usd=0.01)) for i in range(1, 6)]
    metrics = agent_metrics(x + y)
    assert metrics["trials"] == 10 and metrics["tasks"] == 2
    assert metrics["mean_reward"] == pytest.approx(0.7)  # 7 ones of 10, the missing reward a 0
    assert metrics["pass_at_k"] == pytest.approx({"1": 0.7, "2": 0.85, "3": 0.95, "4": 1.0, "5": 1.0})
    assert metrics["pass_at_k_absent"] is None
    rewards = metrics["rewards"]
    assert rewards["counts"] == {"0": 3, "1": 7} and rewards["missing"] == 1
    assert (rewards["min"], rewards["max"]) == (0.0, 1.0)
    assert rewards["stdev"] == pytest.approx((0.7 * 0.3) ** 0.5)  # the population deviation of 0/1 values
    assert metrics["errors"]["verifier_errors"] == 1
    assert (metrics["context_tokens"], metrics["cost_usd"]) == (500, pytest.approx(0.05))
    assert (metrics["seconds"], metrics["median_seconds"]) == (20.0, 2.0)


def test_pass_at_k_stops_at_the_fewest_trials_a_task_has() -> None:
    """A partial job (stopped): task x has 3 trials, y only 1, so only pass@1 is over both tasks."""
    found = [_trial("x", i, 1.0) for i in (1, 2, 3)] + [_trial("y", 1, 0.0)]
    assert agent_metrics(found)["pass_at_k"] == {"1": 0.5}


def test_pass_at_k_is_absent_with_its_reason_when_rewards_are_not_0_or_1_or_none_was_verified() -> None:
    partial = agent_metrics([_trial("x", 1, 0.5), _trial("x", 2, 1.0)])
    assert partial["pass_at_k"] is None
    assert partial["pass_at_k_absent"] == "not every reward is 0 or 1 (one is 0.5)"
    assert partial["mean_reward"] == 0.75 and "counts" not in partial["rewards"]
    unverified = agent_metrics([_trial("x", 1, None, verifier=None)])
    assert unverified["mean_reward"] is None and unverified["pass_at_k"] is None
    assert unverified["pass_at_k_absent"] == "no trial was verified (the tasks have no verifier)"
    assert unverified["cost_usd"] is None


def test_errors_are_counted_by_status_and_kind_and_the_totals_span_every_agent() -> None:
    failed = _trial("x", 1, 0.0, status=Status.FAILED, error_kind=ErrorKind.AGENT_START, retried=["died", "died"])
    late = _trial("x", 2, 0.0, status=Status.TIMED_OUT)
    other = msgspec.structs.replace(_trial("x", 1, 1.0), agent="b")
    job = job_metrics([failed, late, other])
    assert list(job["agents"]) == ["a", "b"]
    errors = job["agents"]["a"]["errors"]
    assert errors["by_status"] == {"failed": 1, "timed_out": 1}
    assert errors["by_kind"] == {"agent_start": 1} and errors["retried"] == 2
    assert job["totals"]["trials"] == 3 and job["totals"]["completed"] == 1
    assert job["totals"]["errors"]["by_status"] == {"failed": 1, "timed_out": 1}


def test_a_results_line_from_before_trials_loads_as_trial_1() -> None:
    old = '{"task": "t", "agent": "a", "status": "completed", "timings": {"started_at": 1.0}, "attempt": 1}'
    result = TaskResult.from_json(old)
    assert result.key == ("t", "a", 1) and result.retried == [] and result.error_kind is None

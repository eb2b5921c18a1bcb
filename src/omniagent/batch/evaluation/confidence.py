"""The 95% confidence interval of a mean reward, for the report (`report.py`): pure functions, no I/O.

Rewards that are all 0 or 1 get the Wilson score interval, which stays inside [0, 1] and means something at 0 or n
successes and for few trials (the normal approximation collapses to a point there). Other rewards get the normal
approximation: mean ± z·s/√n, with s the sample standard deviation (n - 1); it needs two trials at least. Either way
each trial counts as an independent draw (the trials of one task are not, so with few tasks the true interval is
wider). Not job.json's metrics (metrics.py): job.json carries no interval.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = statistics.NormalDist().inv_cdf(0.975)  # 1.959963…: 95% two-sided
WILSON = "Wilson"
NORMAL = "normal approximation"


@dataclass(frozen=True, slots=True)
class Interval:
    """A confidence interval and the method that gave it (`WILSON` or `NORMAL`)."""

    low: float
    high: float
    method: str


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion, `successes` out of `n` (n ≥ 1)."""
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"the Wilson interval needs n >= 1 and 0 <= successes <= n (n={n}, successes={successes})")
    p = successes / n
    shrink = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / shrink
    half = z / shrink * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def normal(values: Sequence[float], z: float = Z95) -> tuple[float, float]:
    """The normal-approximation interval of the mean of `values` (two at least): mean ± z·s/√n."""
    if len(values) < 2:
        raise ValueError("the normal approximation needs two values at least")
    mean = statistics.fmean(values)
    half = z * statistics.stdev(values) / math.sqrt(len(values))
    return mean - half, mean + half


def mean_interval(rewards: Sequence[float]) -> Interval | None:
    """The 95% interval of the mean of `rewards` (see the module docstring); None when there is none (no reward, or
    a single reward that is not 0 or 1)."""
    if rewards and all(reward in (0.0, 1.0) for reward in rewards):
        low, high = wilson(sum(1 for reward in rewards if reward == 1.0), len(rewards))
        return Interval(low, high, WILSON)
    if len(rewards) < 2:
        return None
    low, high = normal(rewards)
    return Interval(low, high, NORMAL)

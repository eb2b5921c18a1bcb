"""The report's 95% interval of a mean reward (`omniagent.batch.evaluation.confidence`) against published and
hand-worked values: Wilson for 0/1 rewards, the normal approximation for the others."""

from __future__ import annotations

import pytest

from omniagent.batch.evaluation.confidence import NORMAL, WILSON, mean_interval, normal, wilson


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        # Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I, method 3 (Wilson).
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        (29, 29, 0.8830, 1.0),
        (5, 10, 0.2366, 0.7634),
    ],
)
def test_wilson_gives_the_published_intervals(successes: int, n: int, low: float, high: float) -> None:
    assert wilson(successes, n) == pytest.approx((low, high), abs=5e-5)


def test_wilson_refuses_an_impossible_count() -> None:
    for successes, n in ((1, 0), (-1, 3), (4, 3)):
        with pytest.raises(ValueError):
            wilson(successes, n)


def test_the_normal_approximation_is_the_mean_plus_or_minus_z_standard_errors() -> None:
    """[0, 0.5, 1, 1]: mean 0.625, s² = 0.6875/3, so the half width is 1.959964·√(0.6875/3)/2 = 0.469131."""
    assert normal([0.0, 0.5, 1.0, 1.0]) == pytest.approx((0.155869, 1.094131), abs=1e-6)
    assert normal([0.5, 0.5]) == (0.5, 0.5)
    with pytest.raises(ValueError):
        normal([0.5])


def test_mean_interval_picks_wilson_for_0_1_rewards_and_the_normal_approximation_else() -> None:
    binary = mean_interval([1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0])
    assert binary is not None and binary.method == WILSON
    assert (binary.low, binary.high) == pytest.approx((0.2366, 0.7634), abs=5e-5)
    one = mean_interval([1.0])
    assert one is not None and one.method == WILSON and one.high == 1.0 and one.low == pytest.approx(0.2065, abs=5e-5)
    graded = mean_interval([0.0, 0.5, 1.0, 1.0])
    assert graded is not None and graded.method == NORMAL
    assert (graded.low, graded.high) == pytest.approx((0.155869, 1.094131), abs=1e-6)
    assert mean_interval([0.5]) is None and mean_interval([]) is None

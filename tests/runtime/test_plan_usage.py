"""Plan usage without a network namespace: the cache, the translations, Claude Code's reader over recorded frames
(its numbers come only from https://api.anthropic.com, so the real CLI cannot give them offline), the agents that
cannot report it, and the sidecar's `plan_usage` line. The real codex and claude are in
tests/e2e/agents/test_plan_usage.py."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path

import pytest

from omniagent.faces.cli.usage import resets_in
from omniagent.protocols.sidecar.agents import PlanUsage, UsageWindow
from omniagent.protocols.sidecar.base import SystemTime
from omniagent.protocols.sidecar.commands import AcpSpec, InlineAcp
from omniagent.runtime.adapters.mock import MockScript
from omniagent.runtime.catalog import PROFILES, env_override_names
from omniagent.runtime.errors import UnsupportedFeature
from omniagent.runtime.plan_usage import CACHE_SECONDS, PlanUsageCache, claude_plan_usage, codex_plan_usage
from omniagent.runtime.runtime import Runtime
from tests.e2e.sidecar_client import Sidecar
from tests.sidecar_schema import validate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "plan_usage"
RECORDING = FIXTURES / "claude-2.1.197-subscription.json"


def _at(iso: str) -> SystemTime:
    return SystemTime(secs_since_epoch=int(datetime.fromisoformat(iso).timestamp()), nanos_since_epoch=0)


# --- the cache ---------------------------------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _counting_reader(
    calls: list[int], started: asyncio.Event | None = None, gate: asyncio.Event | None = None
) -> Callable[[], Awaitable[PlanUsage]]:
    async def read() -> PlanUsage:
        calls.append(1)
        if started is not None and gate is not None:
            started.set()
            await gate.wait()
        return PlanUsage(plan=f"read {len(calls)}", windows=[], fetched_at=SystemTime.now())

    return read


async def test_cache_keeps_an_answer_60_s_per_key_then_reads_again() -> None:
    clock, calls = _Clock(), list[int]()
    cache = PlanUsageCache(clock=clock)
    read = _counting_reader(calls)
    first = await cache.get(("codex", "/bin/codex"), read)
    clock.now += CACHE_SECONDS - 0.001
    assert await cache.get(("codex", "/bin/codex"), read) == first
    assert len(calls) == 1
    other = await cache.get(("codex", "/other/codex"), read)  # another executable is another key
    assert other.plan == "read 2"
    clock.now += 0.001
    assert (await cache.get(("codex", "/bin/codex"), read)).plan == "read 3"


async def test_cache_shares_one_read_between_concurrent_asks_and_keeps_no_failure() -> None:
    calls: list[int] = []
    started, gate = asyncio.Event(), asyncio.Event()
    cache = PlanUsageCache()
    read = _counting_reader(calls, started, gate)
    asks = [asyncio.ensure_future(cache.get(("claude", "/c"), read)) for _ in range(3)]
    await started.wait()  # the read runs and has not answered: every ask is waiting on it
    gate.set()
    answers = await asyncio.gather(*asks)
    assert len(calls) == 1 and answers[0] == answers[1] == answers[2]

    async def fail() -> PlanUsage:
        calls.append(1)
        raise UnsupportedFeature("no plan quota for this login")

    for _ in range(2):
        with pytest.raises(UnsupportedFeature):
            await cache.get(("codex", "/x"), fail)
    assert len(calls) == 3  # the failure was read twice: not kept


# --- translations ------------------------------------------------------------------------------------------


def test_claude_get_usage_becomes_session_and_week_windows() -> None:
    usage = json.loads(RECORDING.read_text())["get_usage"]
    plan = claude_plan_usage(usage["rate_limits"], plan=usage["subscription_type"])
    assert plan.plan == "max"
    assert plan.windows == [
        UsageWindow(label="Session", used_percent=23, resets_at=_at("2031-01-01T03:12:00+00:00")),
        UsageWindow(label="Week", used_percent=61, resets_at=_at("2031-01-05T00:00:00+00:00")),
    ]
    validate("PlanUsage", plan.dump())


def test_claude_windows_left_null_or_odd_are_dropped_or_clamped() -> None:
    plan = claude_plan_usage({"five_hour": None, "seven_day": {"utilization": 140, "resets_at": "not a time"}})
    assert plan.windows == [UsageWindow(label="Week", used_percent=100, resets_at=None)]


def test_codex_rate_limits_label_windows_by_duration_with_the_plan_defaults() -> None:
    plan = codex_plan_usage(
        {"planType": "free", "primary": {"usedPercent": 41.6, "resetsAt": 5}, "secondary": {"usedPercent": -3}}
    )
    assert [(w.label, w.used_percent) for w in plan.windows] == [("Session", 42), ("Month", 0)]
    assert plan.windows[0].resets_at == SystemTime(secs_since_epoch=5, nanos_since_epoch=0)


# --- Claude Code's reader over recorded frames -------------------------------------------------------------


def _replaying_claude(tmp_path: Path, recording: Path = RECORDING) -> tuple[Path, Path]:
    """A `claude` executable replaying `recording`; returns (executable, its spawn log)."""
    bin_dir, spawns = tmp_path / "bin", tmp_path / "claude-spawns"
    bin_dir.mkdir(exist_ok=True)
    claude = bin_dir / "claude"
    claude.write_text(
        "#!/bin/sh\n"
        f"export REPLAY_CLAUDE_FRAMES={shlex.quote(str(recording))} REPLAY_CLAUDE_SPAWNS={shlex.quote(str(spawns))}\n"
        f'exec {shlex.quote(sys.executable)} {shlex.quote(str(FIXTURES / "replay_claude.py"))} "$@"\n',
        encoding="utf-8",
    )
    claude.chmod(0o755)
    return claude, spawns


def only_agents(home: Path, **executables: Path) -> dict[str, str]:
    """An environment where discovery finds exactly these agents (and our engine): every other override empty, an
    empty HOME, no login shell, a PATH without agent CLIs."""
    env = dict(os.environ)
    for row in PROFILES:
        for name in env_override_names(row.id):
            env[name] = ""
    for agent, executable in executables.items():
        env[env_override_names(agent)[0]] = str(executable)
    home.mkdir(exist_ok=True)
    env |= {"HOME": str(home), "OMNIAGENT_NO_LOGIN_SHELL": "1"}
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"])
    return env


async def test_claude_subscription_windows_are_read_once_per_minute(tmp_path: Path) -> None:
    """Issue acceptance (plan usage): Claude through its control request, launched with the catalog's stream-json
    flags; a second ask within 60 s launches nothing."""
    claude, spawns = _replaying_claude(tmp_path)
    async with Runtime(env=only_agents(tmp_path / "home", claude=claude)) as runtime:
        usage = await runtime.plan_usage("claude")
        again = await runtime.plan_usage("claude")
    assert usage.plan == "max"
    assert [(w.label, w.used_percent) for w in usage.windows] == [("Session", 23), ("Week", 61)]
    assert again == usage
    (launch,) = spawns.read_text().splitlines()
    assert launch.split() == [arg for row in PROFILES if row.id == "claude" for arg in row.launch_args]


async def test_claude_that_does_not_answer_get_usage_is_unsupported(tmp_path: Path) -> None:
    recording = tmp_path / "old.json"
    recording.write_text(json.dumps({"initialize": {"account": {"subscriptionType": "Claude Pro"}}}))
    claude, _ = _replaying_claude(tmp_path, recording)
    async with Runtime(env=only_agents(tmp_path / "home", claude=claude)) as runtime:
        with pytest.raises(UnsupportedFeature, match="plan usage"):
            await runtime.plan_usage("claude")


# --- agents that cannot report it, and the sidecar line --------------------------------------------------------


async def test_agents_without_a_reader_are_unsupported_without_launching_anything(tmp_path: Path) -> None:
    """Issue: `UnsupportedFeature` for the rest — the mock agent, our engine, any ACP agent (catalog or inline)."""
    gemini = tmp_path / "gemini"
    gemini.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(tmp_path / 'launched'))}\n")
    gemini.chmod(0o755)
    env = only_agents(tmp_path / "home", gemini=gemini)
    inline = InlineAcp(acp=AcpSpec(name="some-acp", path=str(tmp_path / "absent"), args=[]))
    async with Runtime(env=env) as runtime:
        for agent in ("omniagent", "gemini", inline):
            with pytest.raises(UnsupportedFeature) as raised:
                await runtime.plan_usage(agent)
            assert raised.value.detail == "plan usage"
    async with Runtime(mock=MockScript()) as runtime:
        with pytest.raises(UnsupportedFeature):
            await runtime.plan_usage("mock")
    assert not (tmp_path / "launched").exists()


async def test_sidecar_plan_usage_answers_a_schema_valid_plan_usage_or_error(tmp_path: Path) -> None:
    """The sidecar's `plan_usage` command: an `ok` holding a `PlanUsage`, or an `UnsupportedFeature` error body
    (every line is validated against the wire schema by the client)."""
    claude, spawns = _replaying_claude(tmp_path)
    async with Sidecar.running(env=only_agents(tmp_path / "home", claude=claude)) as sidecar:
        usage = await sidecar.ok("plan_usage", agent="claude")
        validate("PlanUsage", usage)
        assert [w["label"] for w in usage["windows"]] == ["Session", "Week"]
        assert await sidecar.ok("plan_usage", agent="claude") == usage
        error = await sidecar.error("plan_usage", agent="omniagent")
        assert error["kind"] == "UnsupportedFeature" and error["detail"] == "plan usage"
        missing = await sidecar.error("plan_usage", agent="gemini")
        assert missing["kind"] == "NotInstalled"
    assert len(spawns.read_text().splitlines()) == 1


async def test_sidecar_plan_usage_of_the_mock_agent_is_unsupported() -> None:
    async with Sidecar.running(mock="turn") as sidecar:
        error = await sidecar.error("plan_usage", agent="mock")
    assert error["kind"] == "UnsupportedFeature"


# --- `omniagent usage` -----------------------------------------------------------------------------------------


def test_reset_times_are_said_in_minutes_hours_or_days_rounded_up() -> None:
    def said(seconds: float | None) -> str:
        resets = None if seconds is None else SystemTime(secs_since_epoch=int(1000 + seconds), nanos_since_epoch=0)
        return resets_in(UsageWindow(label="Session", used_percent=1, resets_at=resets), now=1000)

    assert [said(s) for s in (None, -5, 0, 1, 59 * 60, 3600, 3600 + 61, 86400 * 2 + 3600 * 5)] == [
        "",
        "resets now",
        "resets now",
        "resets in 1m",
        "resets in 59m",
        "resets in 1h 0m",
        "resets in 1h 2m",
        "resets in 2d 5h",
    ]


def test_usage_command_exit_codes(tmp_path: Path) -> None:
    """`omniagent usage`: 0 when an agent showed its windows, 1 when the asked agent is not installed."""
    claude, _ = _replaying_claude(tmp_path)
    env = only_agents(tmp_path / "home", claude=claude)

    def usage(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "omniagent", "usage", *args]
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)

    shown = usage("--agent", "claude", "--json")
    assert shown.returncode == 0, shown.stderr
    (answer,) = json.loads(shown.stdout)["agents"]
    validate("PlanUsage", answer["usage"])
    assert answer["id"] == "claude" and answer["error"] is None
    missing = usage("--agent", "gemini")
    assert missing.returncode == 1 and missing.stdout == ""
    assert "agent not installed: gemini" in missing.stderr

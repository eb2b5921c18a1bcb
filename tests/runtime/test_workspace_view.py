"""`Runtime.open(..., workdir=…)`, the workspace view (runtime/view.py), with a process agent: the fake ACP agent
subprocess runs in bubblewrap's view of this machine, started at the workdir and told it is its cwd; what it writes
there lands in the session's directory; nothing is made at the workdir here; without bubblewrap the open is
refused and nothing starts."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import pytest

from omniagent.runtime.errors import InvalidConfiguration, SpawnFailed
from omniagent.runtime.runtime import Runtime
from tests.runtime.adapters.acp.harness import TIMING, agent_session, fake_agent, one_turn, texts


def _absent(path: Path) -> bool:
    return not os.path.lexists(path)


async def _where(directory: Path, prompt: str, **open_options: object) -> dict[str, str]:
    """What the fake agent says of where it ran, after one `write PATH WORDS` turn."""
    async with agent_session(fake_agent(1), directory, **open_options) as session:
        await session.prompt(prompt)
        answer = json.loads(texts(await one_turn(session)))
    assert isinstance(answer, dict)
    return answer


async def test_a_process_agent_opened_with_a_workdir_works_there_and_writes_into_the_directory(
    tmp_path: Path,
) -> None:
    """The agent's process starts at the workdir (a top-level path this machine lacks), its session's cwd is the
    workdir, and its write to <workdir>/answer.txt is the directory's answer.txt."""
    workdir = Path(f"/omniagent-view-{secrets.token_hex(4)}")
    where = await _where(tmp_path, f"write {workdir}/answer.txt the answer is 42", workdir=str(workdir))
    assert where == {"cwd": str(workdir), "session_cwd": str(workdir)}
    assert (tmp_path / "answer.txt").read_text() == "the answer is 42\n"
    assert _absent(workdir)


async def test_a_workdir_below_a_directory_this_machine_has_is_not_made_in_it(tmp_path: Path) -> None:
    """A workdir whose parent exists here (tmp_path/seen/app): the agent works there, nothing named `seen` appears
    in tmp_path."""
    directory, workdir = tmp_path / "ws", tmp_path / "seen" / "app"
    directory.mkdir()
    where = await _where(directory, f"write {workdir}/answer.txt deep", workdir=str(workdir))
    assert where == {"cwd": str(workdir), "session_cwd": str(workdir)}
    assert (directory / "answer.txt").read_text() == "deep\n"
    assert _absent(tmp_path / "seen")


async def test_without_a_workdir_the_agent_works_at_the_directory_itself(tmp_path: Path) -> None:
    where = await _where(tmp_path, "write answer.txt plain")
    assert where == {"cwd": str(tmp_path), "session_cwd": str(tmp_path)}
    assert (tmp_path / "answer.txt").read_text() == "plain\n"


@pytest.mark.parametrize("workdir", ["app", "/", "/app/../etc"])
async def test_a_workdir_that_is_not_an_absolute_normal_path_is_refused(tmp_path: Path, workdir: str) -> None:
    log = tmp_path / "wire.log"
    async with Runtime(timing=TIMING) as runtime:
        with pytest.raises(InvalidConfiguration, match="the workdir must be an absolute, normal path"):
            await runtime.open(fake_agent(1, "--log", str(log)), tmp_path, workdir=workdir)
    assert _absent(log)  # the agent never started


async def test_a_workdir_without_bubblewrap_is_refused_and_nothing_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No `bwrap` on PATH: the open fails saying what is missing and how to install it; the agent never starts,
    and never at the directory's own path instead."""
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    log = tmp_path / "wire.log"
    async with Runtime(timing=TIMING) as runtime:
        with pytest.raises(SpawnFailed) as refused:
            await runtime.open(fake_agent(1, "--log", str(log)), tmp_path, workdir="/app")
    assert "showing the workspace at /app needs bubblewrap (bwrap), which is not installed" in str(refused.value)
    assert "apt-get install bubblewrap" in str(refused.value)
    assert _absent(log)

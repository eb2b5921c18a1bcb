"""One isolated world per test: a fake LLM holding a loopback-only network namespace, a fresh HOME, a work dir and a
launcher script that starts the real agent inside the namespace with a clean environment.

    async with agent_world("qwen", tmp_path, scenario) as world:
        world.argv                 # [launcher, *catalog launch args]: spawn this (direct ACP client)
        world.runtime_env          # env for Runtime(env=…): OMNIAGENT_QWEN_BIN names the launcher
        await world.wait_request(marker)   # bounded wait for the agent's model call
        os.kill(world.agent_pid(), SIGKILL)

The launcher is a tiny sh script: it records its pid, then `exec nsenter … -- env -i <agent env> <agent> "$@"`.
Every step execs in place, so the recorded pid is the agent's pid, and the env the runtime passes to its child
does not leak into the agent (HOME, keys and base URLs come only from `peers.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.sidecar.commands import AcpSpec, AgentRef, InlineAcp
from omniagent.runtime.catalog import env_override_names, profile
from tests.e2e.agents import netns, packages
from tests.e2e.agents.peers import AGENT_PATH, PEERS, TEXT, TOUCHED

# Seconds for each step against a real agent: npm agents take 1-2 s to start and 1-2 s per turn on 2 busy cores.
STEP = 60.0
# Seconds the fake LLM gets to print its origin (a Python start).
LLM_START = 30.0
# Seconds between looks at the fake LLM's request log while waiting for a request.
LOG_POLL = 0.05
# A reply slow enough to be cancelled or killed mid-stream: ~40 chunks, one every 0.5 s.
SLOW_TEXT = "slow " * 40
# Gemini's model router asks for JSON first (docs/testing.md); answer it wherever it appears.
ROUTER = {
    "kind": "reply",
    "text": json.dumps({"complexity_reasoning": "simple", "complexity_score": 1}),
    "match": "responseJsonSchema",
    "sticky": True,
}


def plain_scenario() -> dict[str, Any]:
    """Every call answers TEXT."""
    return {"steps": [ROUTER], "fallback": {"kind": "reply", "text": TEXT}}


def tool_scenario(agent: str) -> dict[str, Any]:
    """The main call asks for the shell tool once (`touch fake_tool_ran.txt`); every later call answers text."""
    peer = PEERS[agent]
    call = {"name": peer.shell_tool, "arguments": peer.shell_arguments}
    step = {"kind": "reply", "tool_calls": [call], "match": peer.main_marker}
    return {"steps": [ROUTER, step], "fallback": {"kind": "reply", "text": "tool done"}}


def slow_scenario(agent: str) -> dict[str, Any]:
    """The first main call streams SLOW_TEXT over ~20 s (cancel/kill land mid-stream); later calls answer TEXT."""
    step = {"kind": "reply", "text": SLOW_TEXT, "chunk_delay": 0.5, "match": PEERS[agent].main_marker}
    return {"steps": [ROUTER, step], "fallback": {"kind": "reply", "text": TEXT}}


def namespace_mode() -> netns.Mode:
    """The isolation variant; skips (saying why) where namespaces are forbidden, except as root (CI), where it fails."""
    try:
        return netns.mode()
    except netns.NamespaceUnavailable as exc:
        if os.geteuid() == 0:
            raise
        pytest.skip(f"real-agent tests need a network namespace: {exc}")


@dataclass(slots=True)
class World:
    """What a test gets: see the module docstring."""

    agent: str
    home: Path
    work: Path
    launcher: Path
    argv: list[str]
    runtime_env: dict[str, str]
    log: Path
    pid_file: Path
    origin: str
    """The fake LLM's URL, `http://127.0.0.1:<port>`, reachable only inside the namespace."""
    holder_pid: int
    """The fake LLM's pid: its network namespace is the agents' (`/proc/<pid>/ns/net`)."""
    enter: list[str]
    """The argv prefix that runs a command inside that namespace."""

    @property
    def ref(self) -> AgentRef:
        """What to pass to `Runtime.open`: the catalog id, or an inline ACP agent for the SDK example agent."""
        if self.agent in PEERS:
            return self.agent
        return InlineAcp(acp=AcpSpec(name=self.agent, path=str(self.launcher), args=self.argv[1:]))

    @property
    def touched(self) -> Path:
        """The file the scripted tool call creates in the work dir."""
        return self.work / TOUCHED

    def agent_pid(self) -> int:
        """The pid of the agent started last through the launcher."""
        return int(self.pid_file.read_text().strip())

    def requests(self) -> list[dict[str, Any]]:
        """Every request the fake LLM logged so far (RecordedRequest JSON), oldest first."""
        try:
            lines = self.log.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in lines if line.endswith("}")]

    async def wait_request(self, marker: str, within: float = STEP) -> dict[str, Any]:
        """The first logged request whose body contains `marker`; bounded by `within` seconds."""
        return await self.wait_for(lambda r: marker in json.dumps(r.get("body")), within)

    async def wait_for(self, match: Callable[[dict[str, Any]], bool], within: float = STEP) -> dict[str, Any]:
        """The first logged request satisfying `match` (the log is a file written by another process: polled)."""
        async with asyncio.timeout(within):
            while True:
                for request in self.requests():
                    if match(request):
                        return request
                await asyncio.sleep(LOG_POLL)


@dataclass(frozen=True)
class NamespacedLLM:
    """The fake LLM holding a fresh network namespace with only loopback in it."""

    origin: str  # http://127.0.0.1:<port>, as seen inside the namespace
    log: Path  # its request log, one JSON line per request
    pid: int
    enter: list[str]  # the argv prefix that runs a command inside the namespace


@asynccontextmanager
async def namespaced_llm(root: Path, scenario: dict[str, Any]) -> AsyncIterator[NamespacedLLM]:
    """Start the fake LLM answering `scenario` in a new loopback-only namespace (files under `root`); stop it after."""
    variant = namespace_mode()
    scenario_file, log = root / "scenario.json", root / "llm.jsonl"
    scenario_file.write_text(json.dumps(scenario), encoding="utf-8")
    llm = await asyncio.create_subprocess_exec(
        *netns.unshare_argv(variant),
        sys.executable,
        netns.__file__,
        "--scenario",
        str(scenario_file),
        "--log",
        str(log),
        stdout=asyncio.subprocess.PIPE,
        stderr=(root / "llm.stderr").open("wb"),
    )
    try:
        assert llm.stdout is not None
        async with asyncio.timeout(LLM_START):
            origin = (await llm.stdout.readline()).decode().strip()
        assert origin.startswith("http://127.0.0.1:"), f"fake LLM did not start: {(root / 'llm.stderr').read_text()}"
        yield NamespacedLLM(origin, log, llm.pid, netns.nsenter_argv(variant, llm.pid))
    finally:
        with contextlib.suppress(ProcessLookupError):
            llm.send_signal(signal.SIGTERM)
        try:
            async with asyncio.timeout(10):
                await llm.wait()
        except TimeoutError:
            llm.kill()
            await llm.wait()


@asynccontextmanager
async def agent_world(
    agent: str,
    root: Path,
    scenario: dict[str, Any],
    *,
    unset: tuple[str, ...] = (),
    launcher_enters: bool = True,
) -> AsyncIterator[World]:
    """Start the fake LLM in a fresh namespace, prepare HOME and the launcher for `agent` (see module docstring).
    `unset` names peer variables the agent must not get (a test of a missing key).

    `launcher_enters=False` leaves the namespace out of the launcher: for a caller that runs the runtime itself
    inside it (`World.enter`), as a client of an agent's local HTTP server must, to reach it on 127.0.0.1."""
    row = profile(agent)
    forwarded: tuple[str, ...] = ()
    if agent in PEERS:
        assert row is not None, f"{agent} is not in the catalog"
        target, launch_args, name = [str(packages.entry(PEERS[agent].pinned))], list(row.launch_args), row.cli
        forwarded = PEERS[agent].forwarded
    else:  # the ACP SDK's example agent: a JS file run by node
        target, launch_args, name = ["node", str(packages.entry(agent))], [], agent
    home, work, bin_dir = root / "home", root / "work", root / "bin"
    for directory in (home, work, bin_dir):
        directory.mkdir(parents=True, exist_ok=True)
    async with namespaced_llm(root, scenario) as llm:
        origin = llm.origin
        if agent in PEERS:
            peer = PEERS[agent]
            for path, content in peer.files(home, origin).items():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content, encoding="utf-8")
            env = {k: v for k, v in peer.env(home, origin).items() if k not in unset}
        else:
            env = {"HOME": str(home), "PATH": AGENT_PATH}
        pid_file = root / "agent.pid"
        launcher = bin_dir / name
        enter = llm.enter
        entering = enter if launcher_enters else []
        command = shlex.join([*entering, "env", "-i", *(f"{k}={v}" for k, v in env.items())])
        passed = "".join(f' {k}="${k}"' for k in forwarded)
        launcher.write_text(
            f'#!/bin/sh\necho $$ > {shlex.quote(str(pid_file))}\nexec {command}{passed} {shlex.join(target)} "$@"\n',
            encoding="utf-8",
        )
        launcher.chmod(0o755)
        overrides = {name: "" for name in env_override_names(agent)}  # the developer's own overrides must not win
        # No login shell: the override is found first anyway, and the developer's rc files have no place here.
        runtime_env = dict(os.environ) | overrides | {env_override_names(agent)[0]: str(launcher)}
        runtime_env["OMNIAGENT_NO_LOGIN_SHELL"] = "1"
        argv = [str(launcher), *launch_args]
        yield World(agent, home, work, launcher, argv, runtime_env, llm.log, pid_file, origin, llm.pid, enter)

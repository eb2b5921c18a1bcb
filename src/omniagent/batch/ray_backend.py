"""The Ray backend: each run a Ray task on a worker that has omniagent and the agent CLIs installed.

What runs where:
- the driver (`omniagent batch --ray`) plans, schedules and writes every output file; it starts a local cluster on
  127.0.0.1 (no ADDRESS; `-j` is then its CPU count) or joins one (`--ray ADDRESS`). The local cluster's node is
  127.0.0.1, so every Ray process of it (GCS, raylet, runtime-env agent, workers, the driver's own gRPC server)
  listens on 127.0.0.1 only; it refuses to go on otherwise;
- each run is one Ray task (a streaming generator, resources from the task's `resources`), executing
  `execute.run_one` on a `Runtime` of its own, in a directory of its own under the worker's temp dir (removed
  afterwards; a `copy` or `git` source path must therefore exist on the worker too). It streams back where it runs
  (the node's address and id, the process, the workspace), each event as it happens and the result with its diff;
- a task's verifier and oracle run on the worker beside the agent (`run_one` runs them), their logs in the attempt's
  directory there, not in OUT (the worker may be another machine): the files come back with the result and the
  driver writes them into OUT/tasks/T/A/ (`verifier/`, `agent/`), as it writes every other file of the run;
- a worker lost mid-run (its process or node died) is an interrupted run: it is started again once, from a fresh
  workspace; lost twice, the run fails. Ray's own retries are off so this rule is the only one. What a lost attempt
  left on its node is removed by a small task pinned to that node.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import queue
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from omniagent.batch import workspace
from omniagent.batch.execute import CANCEL_WAIT, RunSpec, run_one, with_retries
from omniagent.batch.ray_local import LOOPBACK, loopback_node, on_loopback
from omniagent.batch.reporting import Reporter, interrupted
from omniagent.batch.results import ErrorKind, Status, TaskResult, Timings
from omniagent.errors import OmniagentError
from omniagent.runtime.runtime import Runtime

INSTALL_HINT = "pip install 'omniagent[ray]'"
ATTEMPTS = 2  # a run whose worker is lost is started again once
REACH_TIMEOUT = 10.0  # seconds to connect to a cluster's GCS port before saying nothing answers there
_CANCEL_CHECK = 0.2  # seconds a worker waits for its run's next item before it can see a cancel
DISCARD_TIMEOUT = 30.0  # seconds for removing what a lost attempt left on its node
LOGS = "logs"  # beside an attempt's workspace on its worker: its verifier's and oracle's logs until they are sent
LogEntry = tuple[str, str, bytes | str]  # a file of those logs: (relative path, "dir" | "file" | "link", content)


class RayUnavailable(OmniagentError):
    """`--ray` cannot be used: Ray is not installed (the message says how to install it), or the cluster cannot be
    started or joined (the message says which and why)."""


def require_ray() -> None:
    """Raises `RayUnavailable` when Ray cannot be imported."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise RayUnavailable(f"--ray needs Ray, which is not installed here; install it with: {INSTALL_HINT}") from None


class RayBackend:
    """Runs every spec as a Ray task; see the module docstring."""

    def __init__(self, address: str | None, jobs: int) -> None:
        self._address = address
        self._jobs = jobs
        self._batch = uuid.uuid4().hex[:12]
        self._discards: set[asyncio.Task[None]] = set()  # removing what lost attempts left on their nodes

    async def run_all(
        self, specs: list[RunSpec], reporter: Reporter, deliver: Callable[[TaskResult], None], stop: asyncio.Event
    ) -> None:
        require_ray()
        import ray

        if self._address is not None:
            await _check_reachable(self._address)
        try:
            await asyncio.to_thread(self._connect, ray)
        except RayUnavailable:
            raise
        except Exception as error:  # Ray raises many kinds here (ConnectionError, RuntimeError, its own)
            where = f"join the Ray cluster at {self._address}" if self._address else "start a local Ray cluster"
            raise RayUnavailable(f"could not {where}: {type(error).__name__}: {error}") from None
        try:
            async with asyncio.TaskGroup() as group:
                for spec in specs:
                    group.create_task(self._trial(ray, spec, reporter, deliver, stop))
        finally:
            if self._discards:
                await asyncio.gather(*self._discards, return_exceptions=True)
            await asyncio.to_thread(ray.shutdown)

    def _connect(self, ray: Any) -> None:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        # ERROR: Ray's notices at start (token auth on, no SIGTERM handler off the main thread, where ours is) and
        # its warnings about dead workers (ours to report) are not the batch's news.
        quiet = {"log_to_driver": False, "logging_level": logging.ERROR}
        if self._address is not None:
            with loopback_node() if on_loopback(self._address) else contextlib.nullcontext():
                ray.init(address=self._address, **quiet)
            return
        # A cluster of our own on loopback only: no dashboard, its node 127.0.0.1 (see `ray_local`).
        with loopback_node():
            ray.init(
                address="local",
                _node_ip_address=LOOPBACK,
                include_dashboard=False,
                num_cpus=max(self._jobs, 1),
                **quiet,
            )
        gcs = ray.get_runtime_context().gcs_address
        if gcs.rpartition(":")[0] != LOOPBACK:
            ray.shutdown()
            raise RayUnavailable(
                f"the local Ray cluster started on {gcs}, not on {LOOPBACK}, so it would listen beyond loopback; "
                "it was stopped (join a cluster of your own with --ray ADDRESS instead)"
            )

    async def _trial(
        self,
        ray: Any,
        spec: RunSpec,
        reporter: Reporter,
        deliver: Callable[[TaskResult], None],
        stop: asyncio.Event,
    ) -> None:
        """One trial: tries while its failures are the infrastructure's (`with_retries`), each as `_run`."""

        async def once(number: int) -> TaskResult:
            return await self._run(ray, spec, number, reporter, stop)

        deliver(await with_retries(once, spec.retries, stop))

    async def _run(self, ray: Any, spec: RunSpec, number: int, reporter: Reporter, stop: asyncio.Event) -> TaskResult:
        """Try `number` of a trial, started once more on a fresh worker when its worker is lost."""
        lost = _lost_errors(ray)
        for attempt in range(1, ATTEMPTS + 1):
            if stop.is_set():
                break
            where = self._remote_workspace(spec, number, attempt)
            attempt_spec = replace(spec, attempt=attempt, workspace=where)
            on_event = reporter.started(attempt_spec)
            seen: dict[str, Any] = {}
            try:
                result = await self._attempt(ray, attempt_spec, reporter, on_event, stop, seen)
            except lost as error:
                self._discard_later(ray, attempt_spec, seen.get("node_id"))
                if attempt == ATTEMPTS:
                    return _failed(attempt_spec, f"the Ray worker was lost twice: {type(error).__name__}", seen)
                continue
            finally:
                reporter.ended(attempt_spec)
            return result
        return interrupted(spec)

    def _remote_workspace(self, spec: RunSpec, number: int, attempt: int) -> Path:
        # Resolved on the worker: a relative path under its own temp dir (see `_work`), in a directory of the
        # try's and attempt's own, so removing what a lost attempt left never races with a later one. `+` is in no
        # id.
        name = f"omniagent-batch-{self._batch}+{spec.task.id}+{spec.agent}+{spec.trial}+{number}+{attempt}"
        return Path(name) / "workspace"

    def _discard_later(self, ray: Any, spec: RunSpec, node_id: str | None) -> None:
        """Remove what a lost attempt left (its workspace, the baseline, their directory) on the node it ran on,
        while the batch goes on; `run_all` waits for it before stopping Ray."""
        if node_id is None:  # lost before it said where it ran: it had not prepared anything
            return
        job = asyncio.create_task(_discard_on(ray, node_id, spec))
        self._discards.add(job)
        job.add_done_callback(self._discards.discard)

    @staticmethod
    async def _attempt(
        ray: Any,
        spec: RunSpec,
        reporter: Reporter,
        on_event: Callable[[dict[str, Any]], None],
        stop: asyncio.Event,
        seen: dict[str, Any],
    ) -> TaskResult:
        resources = spec.task.resources
        options: dict[str, Any] = {
            "num_cpus": resources.num_cpus,
            "num_gpus": resources.num_gpus,
            "resources": resources.custom,
            "max_retries": 0,  # a lost worker is our retry, not Ray's (see the module docstring)
            "num_returns": "streaming",
        }
        if resources.memory is not None:
            options["memory"] = resources.memory
        stream = ray.remote(_work).options(**options).remote(spec)
        canceller = asyncio.create_task(_cancel_on(stop, lambda: ray.cancel(stream)))
        try:
            async for ref in stream:
                kind, value = await ref
                if kind == "started":
                    seen.update(value)
                    where = value | {"attempt": spec.attempt, "trial": spec.trial}
                    reporter.note(spec, "worker.json", json.dumps(where) + "\n")
                elif kind == "event":
                    on_event(value)
                else:
                    body, diff, logs = value
                    await asyncio.to_thread(_unpack_logs, logs, spec.logs)
                    return TaskResult.from_json(body, diff=diff)
        except ray.exceptions.TaskCancelledError:
            pass
        except ray.exceptions.RayTaskError as error:  # our code failed on the worker: this run's failure
            return _failed(spec, f"the run failed on the Ray worker: {error.cause or error}", seen)
        finally:
            canceller.cancel()
        return interrupted(spec)


async def _check_reachable(address: str) -> None:
    """Fail fast on a `HOST:PORT` nothing listens on: Ray itself would keep retrying for minutes, unkillable by
    SIGTERM while it does. Other forms (`auto`, `ray://…`) go to Ray as they are."""
    host, _, port = address.rpartition(":")
    if "://" in address or not host or not port.isdigit():
        return
    try:
        async with asyncio.timeout(REACH_TIMEOUT):
            _, writer = await asyncio.open_connection(host.strip("[]"), int(port))
    except (OSError, TimeoutError) as error:
        if isinstance(error, TimeoutError):
            reason = "no answer"
        else:
            reason = os.strerror(error.errno) if error.errno else str(error)
        raise RayUnavailable(f"no Ray cluster answers at {address} ({reason})") from None
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


async def _discard_on(ray: Any, node_id: str, spec: RunSpec) -> None:
    """Run `_discard` on the node `node_id` (pinned there, no CPU needed). Bounded and quiet: a node that is gone
    took the files with it, and a batch does not fail for a leftover."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    strategy = NodeAffinitySchedulingStrategy(node_id, soft=False)
    options = {"num_cpus": 0, "max_retries": 0, "scheduling_strategy": strategy}
    ref = ray.remote(_discard).options(**options).remote(spec.task.workspace, spec.workspace)
    try:
        async with asyncio.timeout(DISCARD_TIMEOUT):
            await ref
    except Exception:  # unschedulable: the node died; anything else: the leftover stays
        with contextlib.suppress(Exception):
            ray.cancel(ref, force=True)


async def _cancel_on(stop: asyncio.Event, cancel: Callable[[], object]) -> None:
    await stop.wait()
    cancel()


def _lost_errors(ray: Any) -> tuple[type[BaseException], ...]:
    names = ("WorkerCrashedError", "NodeDiedError", "LocalRayletDiedError", "OwnerDiedError", "ObjectLostError")
    return tuple(getattr(ray.exceptions, name) for name in names)


def _failed(spec: RunSpec, error: str, seen: dict[str, Any]) -> TaskResult:
    """A run that failed on Ray without a result of its own; `where` names the node when the worker said it."""
    return TaskResult(
        task=spec.task.id,
        agent=spec.agent,
        status=Status.FAILED,
        error=error,
        error_kind=ErrorKind.RAY,
        attempt=spec.attempt,
        trial=spec.trial,
        where=f"ray:{seen['node']}" if "node" in seen else "ray",
        timings=Timings(started_at=time.time()),
    )


def _work(spec: RunSpec) -> Iterator[tuple[str, Any]]:
    """On the worker: run `spec` in a thread of its own (the agent's asyncio loop), yielding what it reports.

    Ray cancels a task by raising in this generator's thread; the `finally` then stops the run (its turn cancelled,
    its session closed) before the worker moves on.
    """
    import ray

    # The address this worker's node registered with the cluster (a worker knows its node): 127.0.0.1 for the
    # local cluster, the node's own address on a real one.
    node: str = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
    node_id: str = ray.get_runtime_context().get_node_id()
    where = Path(tempfile.gettempdir()) / spec.workspace
    # The verifier's and the oracle's logs beside the workspace, in the attempt's own directory on this node: the
    # driver's OUT may not exist here, and what is here is removed with the attempt.
    spec = replace(spec, where=f"ray:{node}", workspace=where, logs=where.parent / LOGS)
    yield ("started", {"pid": os.getpid(), "node": node, "node_id": node_id, "workspace": str(spec.workspace)})
    items: queue.Queue[tuple[str, Any]] = queue.Queue()
    control: dict[str, Any] = {}
    thread = threading.Thread(target=_run_in_thread, args=(spec, items, control), daemon=True)
    thread.start()
    try:
        while True:
            try:
                # A bounded wait: Ray's cancel raises in this thread only while it runs Python code.
                kind, value = items.get(timeout=_CANCEL_CHECK)
            except queue.Empty:
                continue
            if kind == "error":
                raise RuntimeError(value)
            yield (kind, value)
            if kind == "result":
                return
    finally:
        loop, stop = control.get("loop"), control.get("stop")
        if thread.is_alive() and loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has just ended
                loop.call_soon_threadsafe(stop.set)
        thread.join(CANCEL_WAIT + 10)


def _run_in_thread(spec: RunSpec, items: queue.Queue[tuple[str, Any]], control: dict[str, Any]) -> None:
    async def main() -> tuple[TaskResult, list[LogEntry]]:
        control["loop"], control["stop"] = asyncio.get_running_loop(), asyncio.Event()
        try:
            async with Runtime() as runtime:
                result = await run_one(runtime, spec, lambda event: items.put(("event", event)), control["stop"])
            return result, await asyncio.to_thread(_pack_logs, spec.logs)
        finally:
            await _remove_attempt(spec.task.workspace, spec.workspace)

    try:
        result, logs = asyncio.run(main())
    except BaseException as error:  # reported to the driver as the task's failure, not lost in the worker log
        items.put(("error", f"{type(error).__name__}: {error}"))
        return
    items.put(("result", (result.to_json(), result.diff, logs)))


def _pack_logs(root: Path) -> list[LogEntry]:
    """On the worker: what the verifier and the oracle left under `root`, as (path relative to it, kind, content):
    a directory (no content), a file (its bytes), a symbolic link (its target, never followed); parents before their
    children. What cannot be read (a file the verifier made unreadable, a socket) is left out, not the run's
    failure."""
    entries: list[LogEntry] = []
    pending = [root] if root.is_dir() else []
    while pending:
        try:
            listing = sorted(os.scandir(pending.pop()), key=lambda item: item.name)
        except OSError:
            continue
        for entry in listing:
            relative = Path(entry.path).relative_to(root).as_posix()
            with contextlib.suppress(OSError):
                if entry.is_symlink():
                    entries.append((relative, "link", os.readlink(entry.path)))
                elif entry.is_dir():
                    entries.append((relative, "dir", ""))
                    pending.append(Path(entry.path))
                elif entry.is_file():
                    entries.append((relative, "file", Path(entry.path).read_bytes()))
    return entries


def _unpack_logs(entries: list[LogEntry], root: Path) -> None:
    """On the driver: the logs a worker sent (`_pack_logs`), written under the run's `root` (OUT/tasks/T/A)."""
    for relative, kind, content in entries:
        parts = Path(relative).parts
        if not parts or Path(relative).is_absolute() or ".." in parts:
            continue  # not from a walk of the worker's directory: nothing is written outside `root`
        target = root.joinpath(*parts)
        if kind == "dir":
            target.mkdir(parents=True, exist_ok=True)
        elif kind == "link" and isinstance(content, str):
            target.symlink_to(content)
        elif kind == "file" and isinstance(content, bytes):
            target.write_bytes(content)


def _discard(source: Any, relative: Path) -> None:
    """On the node a lost attempt ran on: remove what it left under this node's temp dir."""
    asyncio.run(_remove_attempt(source, Path(tempfile.gettempdir()) / relative))


async def _remove_attempt(source: Any, path: Path) -> None:
    """An attempt's workspace, its baseline and the directory of the attempt's own that holds them."""
    await workspace.discard(source, path)
    await asyncio.to_thread(shutil.rmtree, path.parent, True)

"""What a backend reports while runs go, shared by the local scheduler and the Ray backend: each run's
`events.jsonl`, the observer (the progress view is one), and the result of a run the batch stopped before it ran.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from omniagent.batch.execute import RunSpec
from omniagent.batch.results import EventLog, Status, TaskResult, Timings


class Observer(Protocol):
    """Told what happens, as it happens (the progress view is one)."""

    def planned(self, total: int, already_done: list[TaskResult]) -> None: ...
    def started(self, spec: RunSpec) -> None: ...
    def event(self, spec: RunSpec, event: dict[str, Any]) -> None: ...
    def finished(self, result: TaskResult) -> None: ...


class Reporter:
    """What a backend calls while a run goes: writes `events.jsonl` and tells the observer."""

    def __init__(self, observer: Observer | None) -> None:
        self._observer = observer
        self._logs: dict[tuple[str, str, int], EventLog] = {}

    def started(self, spec: RunSpec) -> Callable[[dict[str, Any]], None]:
        """A try of a run starts (again): its `events.jsonl` begins afresh."""
        old = self._logs.pop(spec.key, None)
        if old is not None:
            old.close()
        log = self._logs[spec.key] = EventLog(spec.logs)
        if self._observer is not None:
            self._observer.started(spec)
        observer = self._observer

        def on_event(event: dict[str, Any]) -> None:
            log.write(event)
            if observer is not None:
                observer.event(spec, event)

        return on_event

    def note(self, spec: RunSpec, name: str, text: str) -> None:
        """A side file of the run (e.g. `worker.json`: where a Ray attempt runs)."""
        (spec.logs / name).write_text(text, encoding="utf-8")

    def ended(self, spec: RunSpec) -> None:
        log = self._logs.pop(spec.key, None)
        if log is not None:
            log.close()


def interrupted(spec: RunSpec) -> TaskResult:
    """The result of a run that never started because the batch was stopped."""
    return TaskResult(
        task=spec.task.id,
        agent=spec.agent,
        trial=spec.trial,
        status=Status.INTERRUPTED,
        timings=Timings(started_at=0.0),
    )

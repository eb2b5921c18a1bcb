"""Fan-out of broadcasts to subscribers (the rpc stream today; an ACP agent or runtime adapter later).

Delivery is synchronous and in emission order: a subscriber must not block (the rpc subscriber queues a line on
its single writer task). Durable broadcasts are emitted only after their transaction committed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from omniagent.engine.tools.plan import PLAN_UPDATED, PlanUpdatedData
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.methods import BROADCASTS

Subscriber = Callable[[str, YukeModel], None]
# Engine extensions to yuke's broadcast table (docs/engine.md): name → data model.
EXTENSION_BROADCASTS: Mapping[str, type[YukeModel]] = {PLAN_UPDATED: PlanUpdatedData}


class Broadcaster:
    """Delivers each `(name, data)` to every subscriber."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add `subscriber`; returns a function that removes it."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber)

    def emit(self, name: str, data: YukeModel) -> None:
        """Send one broadcast to every subscriber."""
        assert isinstance(data, BROADCASTS.get(name) or EXTENSION_BROADCASTS[name]), name
        for subscriber in self._subscribers:
            subscriber(name, data)

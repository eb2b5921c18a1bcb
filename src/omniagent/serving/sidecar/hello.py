"""The sidecar wire's first line, built from our version and the wire's alone: `omniagent serve` writes it before
asyncio is imported (docs/performance.md), a hub's `/sidecar` as its first frame."""

from omniagent._version import __version__
from omniagent.protocols.sidecar import PROTOCOL_VERSION
from omniagent.wire.encode import dumps

HELLO = dumps({"hello": {"protocol": PROTOCOL_VERSION, "anyagent": __version__}})

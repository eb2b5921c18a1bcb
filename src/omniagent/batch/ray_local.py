"""Keeping the local Ray cluster of `omniagent batch --ray` on loopback: what Ray 2.60 needs for its node to be
127.0.0.1, and to join a cluster at a loopback address as given. Not the Ray backend itself (`ray_backend.py`).

Why it takes more than `ray.init(_node_ip_address="127.0.0.1")`: Ray swaps a loopback node address for the host's
routable one (`ray._private.services.resolve_ip_for_localhost`), except where it runs without clusters
(`ray_constants.ENABLE_RAY_CLUSTER`, read once, at import, from RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER). Which address
the node has decides where everything listens: the GCS, the raylet and every core worker's gRPC server (the
driver's too) listen on 127.0.0.1 only when the node address is 127.0.0.1, and on every interface otherwise; the
runtime-env agent binds the node address itself. So, while the cluster starts, this process runs "without
clusters"; the backend then checks the GCS address it got. The same swap turns `--ray 127.0.0.1:PORT` into the
routable address, where a loopback-only cluster does not answer: joining a loopback address runs "without clusters"
too.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from contextlib import contextmanager

LOOPBACK = "127.0.0.1"


@contextmanager
def loopback_node() -> Iterator[None]:
    """While `ray.init(...)` runs inside: Ray takes a loopback address (the node's, the cluster's) as given.

    Only for the start: once the driver's node exists Ray asks it, not this setting, and a later `ray.init` in the
    same process (joining a real cluster) must resolve addresses as Ray normally does, so the setting is restored.
    """
    from ray._private import ray_constants

    before = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = before


def on_loopback(address: str) -> bool:
    """Whether a `--ray HOST:PORT` address names this machine's loopback (`127.0.0.1`, `[::1]`, `localhost`)."""
    host = address.rpartition(":")[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

"""1,000 clients coming and going (streamable HTTP and WebSocket, each on its own TCP connection) leave the real hub
process with the descriptors it had, and its memory flat (benchmarks/hub_cycles.py prints the figures for
docs/performance.md)."""

from __future__ import annotations

from pathlib import Path

from tests.faces.hub.harness import cycle_http, cycle_websocket, hub_process, settled_fds

CYCLES = 1000
WARM_UP = 200
# The allocator settles over the first few hundred cycles (about 10 MiB, then flat: docs/performance.md); a leak of
# one connection's state per cycle (tens of KB) would grow the second half by megabytes.
SECOND_HALF_SLACK_KIB = 4 * 1024
TOTAL_SLACK_KIB = 16 * 1024


def test_a_thousand_connect_disconnect_cycles_leave_descriptors_and_memory_flat(tmp_path: Path) -> None:
    with hub_process(tmp_path, "--mock", "turn") as hub:
        idle = hub.fds()
        for n in range(WARM_UP):
            (cycle_http if n % 2 else cycle_websocket)(hub)
        # Memory is read with the sockets of clients that left closed (hypercorn closes them by its keep-alive
        # timeout, so a moment after they left there are up to a few seconds' worth open).
        before_fds = settled_fds(hub, idle)
        before_rss = hub.rss_kib()
        halfway_rss = 0
        for n in range(1, CYCLES + 1):
            (cycle_http if n % 2 else cycle_websocket)(hub)
            if n == CYCLES // 2:
                settled_fds(hub, before_fds)
                halfway_rss = hub.rss_kib()
        assert settled_fds(hub, before_fds) <= before_fds, hub.stderr()[-2000:]
        after_rss = hub.rss_kib()
        assert after_rss - halfway_rss < SECOND_HALF_SLACK_KIB, (before_rss, halfway_rss, after_rss)
        assert after_rss - before_rss < TOTAL_SLACK_KIB, (before_rss, halfway_rss, after_rss)
        assert hub.proc.poll() is None

"""1,000 clients coming and going (streamable HTTP and WebSocket, each on its own TCP connection) leave the real hub
process with the descriptors it had, and its memory where it was (benchmarks/hub_cycles.py prints the figures for
docs/performance.md)."""

from __future__ import annotations

from pathlib import Path

from tests.faces.hub.harness import cycle_http, cycle_websocket, hub_process, settled_fds

CYCLES = 1000
WARM_UP = 100
# RSS may move by allocator noise; a leak of one connection's state per cycle would be megabytes over 1,000.
RSS_SLACK_KIB = 8 * 1024


def test_a_thousand_connect_disconnect_cycles_leave_descriptors_and_memory_flat(tmp_path: Path) -> None:
    with hub_process(tmp_path, "--mock", "turn") as hub:
        for n in range(WARM_UP):
            (cycle_http if n % 2 else cycle_websocket)(hub)
        before_fds = hub.fds()
        before_rss = hub.rss_kib()
        for n in range(CYCLES):
            (cycle_http if n % 2 else cycle_websocket)(hub)
        after_fds = settled_fds(hub, before_fds)
        assert after_fds <= before_fds, hub.stderr()[-2000:]
        assert hub.rss_kib() - before_rss < RSS_SLACK_KIB
        assert hub.proc.poll() is None

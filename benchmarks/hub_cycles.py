"""`omniagent hub` under clients coming and going: open descriptors and RSS of the real hub process before and after
N connect/disconnect cycles, each on its own TCP connection (streamable HTTP: initialize, open the SSE stream,
DELETE; WebSocket: upgrade, initialize, close), printed every `--every` cycles, each time once the sockets of the
clients that left are closed.

    python benchmarks/hub_cycles.py [--cycles 1000] [--warm-up 100] [--every 200] [--only http|websocket]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package holds the harness

from tests.faces.hub.harness import cycle_http, cycle_websocket, hub_process, settled_fds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=1000)
    parser.add_argument("--warm-up", type=int, default=100)
    parser.add_argument("--every", type=int, default=200)
    parser.add_argument("--only", choices=["http", "websocket"])
    args = parser.parse_args()
    kinds = {"http": [cycle_http], "websocket": [cycle_websocket], None: [cycle_websocket, cycle_http]}[args.only]
    with tempfile.TemporaryDirectory() as data_dir, hub_process(Path(data_dir), "--mock", "turn") as hub:
        idle = hub.fds()
        for n in range(args.warm_up):
            kinds[n % len(kinds)](hub)
        # Read with the sockets of clients that left closed (hypercorn closes them by its keep-alive timeout).
        fds, rss = settled_fds(hub, idle), hub.rss_kib()
        print(f"after {args.warm_up} warm-up cycles: {fds} fds, RSS {rss / 1024:.1f} MiB")
        start = time.perf_counter()
        for n in range(1, args.cycles + 1):
            kinds[n % len(kinds)](hub)
            if n % args.every == 0 or n == args.cycles:
                now, grown = settled_fds(hub, fds), (hub.rss_kib() - rss) / 1024
                pace = (time.perf_counter() - start) / n * 1000
                print(
                    f"after {n} cycles: {now} fds ({now - fds:+d}),"
                    f" RSS {rss / 1024 + grown:.1f} MiB ({grown:+.1f}), {pace:.1f} ms/cycle"
                )


if __name__ == "__main__":
    main()

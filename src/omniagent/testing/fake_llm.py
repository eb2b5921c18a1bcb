"""Run the fake LLM server as a process: `python -m omniagent.testing.fake_llm --scenario FILE --port-file F`.

For real agent CLIs (Gemini CLI, Qwen Code, Claude Code, codex, …) pointed at it by base-URL variables. Prints the
origin URL as the first stdout line, writes the port to `--port-file` (atomically) when asked, appends each request
as a JSON line to `--log` when asked, and serves until SIGTERM/SIGINT (exit 0).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from omniagent.files import write_whole
from omniagent.testing.scenario import Scenario
from omniagent.testing.server import FakeLLMServer


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code (2 for a bad scenario file)."""
    parser = argparse.ArgumentParser(prog="python -m omniagent.testing.fake_llm", description=__doc__)
    parser.add_argument("--scenario", type=Path, help="scenario JSON file (default: empty queue)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: ephemeral)")
    parser.add_argument("--port-file", type=Path, help="write the bound port here once listening")
    parser.add_argument("--log", type=Path, help="append every request as a JSON line here")
    args = parser.parse_args(argv)
    try:
        scenario = Scenario.load(args.scenario) if args.scenario else Scenario()
    except (OSError, ValueError, TypeError) as exc:
        print(f"fake_llm: cannot load the scenario: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    with FakeLLMServer(scenario, port=args.port, log_path=args.log) as server:
        if args.port_file:
            write_whole(args.port_file, server.url.rsplit(":", 1)[1], mode=0o644)
        print(server.url, flush=True)
        stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())

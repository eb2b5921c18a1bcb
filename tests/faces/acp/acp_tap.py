"""Relay stdio between an ACP client and an agent command, logging every line both ways (a test fixture).

    python tests/faces/acp/acp_tap.py LOG -- AGENT ARGV...

Each line becomes one JSON line in LOG: `{"dir": "in"|"out", "line": "<the raw line>"}` ("in" = client → agent).
The tap exits with the agent's status once the agent closes its stdout; closing the tap's stdin closes the agent's.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from typing import IO


def main() -> int:
    log_path, separator, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
    assert separator == "--" and argv, "usage: acp_tap.py LOG -- ARGV..."
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    lock = threading.Lock()
    with open(log_path, "a", encoding="utf-8") as log:

        def record(direction: str, line: bytes) -> None:
            with lock:
                log.write(json.dumps({"dir": direction, "line": line.decode("utf-8", "replace")}) + "\n")
                log.flush()

        def pump_in(sink: IO[bytes]) -> None:
            try:
                for line in sys.stdin.buffer:
                    record("in", line)
                    sink.write(line)
                    sink.flush()
            except (BrokenPipeError, OSError):
                pass
            finally:
                with contextlib.suppress(OSError):
                    sink.close()

        threading.Thread(target=pump_in, args=(child.stdin,), daemon=True).start()
        for line in child.stdout:
            record("out", line)
            try:
                sys.stdout.buffer.write(line)
                sys.stdout.buffer.flush()
            except BrokenPipeError:
                break
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())

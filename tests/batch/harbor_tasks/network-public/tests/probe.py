"""Exit 0 when 127.0.0.1:$PROBE_PORT accepts a connection."""

import os
import socket
import sys

try:
    socket.create_connection(("127.0.0.1", int(os.environ["PROBE_PORT"])), timeout=5).close()
except OSError:
    sys.exit(1)

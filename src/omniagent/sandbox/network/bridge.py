"""The sandbox's end of the allowlist proxy: a few lines of Python that run first inside the sandbox, and the
command line that starts them.

A sandbox in allowlist mode has its own network namespace with only a loopback in it, so nothing the command
opens can leave. The bridge listens on `127.0.0.1:<a free port>` there, then forks: the child hands every accepted
connection to the engine (the socket itself, over the socketpair the engine passed in, `SCM_RIGHTS`) and forgets
it; the parent writes `started` (the sandbox stands and the proxy listens), points the proxy variables at the port
and becomes the command's shell, so the command is the sandbox's first process as without the bridge, and the
bridge dies with the sandbox's PID namespace. The engine (proxy.py) serves each connection it receives; the
bridge never reads a byte of one.

It runs in the engine's own interpreter (`-I -S`: no site, no environment, no user paths), which the sandbox's
read-only root shows; it needs no file path, no unix socket and no other program.

What this is not: the proxy (proxy.py) nor the rest of the sandbox's command line (command_line.py).
"""

from __future__ import annotations

import os
import sys

__all__ = ["BRIDGE_SOURCE", "PROXY_VARIABLES", "bridge_argv"]

# Each name is set to the proxy's URL, upper and lower case (curl reads only the lower-case `http_proxy`).
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
# Names that bypass the proxy: the sandbox's own loopback (a server the command starts and talks to).
NO_PROXY = "localhost,127.0.0.1,::1"

# argv after `-c`: the socketpair's fd, the start pipe's fd, the word saying the sandbox started, the command.
# Only the interpreter's C modules: `socket` and `signal` import `enum`, which doubles the bridge's start-up time.
# Python ignores SIGPIPE and SIGXFSZ, and ignored signals survive exec: the shell gets them back at their defaults
# (`yes | head` must end).
BRIDGE_SOURCE = f"""
import _signal, _socket, array, os, sys
channel = _socket.socket(fileno=int(sys.argv[1]))
started = int(sys.argv[2])
listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
listener.bind(("127.0.0.1", 0))
listener.listen(128)
url = "http://127.0.0.1:%d" % listener.getsockname()[1]
if os.fork() == 0:
    os.close(started)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    while True:
        try:
            connection, _ = listener._accept()
        except ConnectionAbortedError:
            continue
        try:
            channel.sendmsg([b"c"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, array.array("i", [connection]))])
        except OSError:
            os._exit(0)
        os.close(connection)
env = dict(os.environ, NO_PROXY={NO_PROXY!r}, no_proxy={NO_PROXY!r})
for name in {PROXY_VARIABLES!r}:
    env[name] = env[name.lower()] = url
_signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)
_signal.signal(_signal.SIGXFSZ, _signal.SIG_DFL)
channel.close()
listener.close()
os.write(started, sys.argv[3].encode())
os.close(started)
os.execve("/bin/sh", ["/bin/sh", "-c", sys.argv[4]], env)
"""


def bridge_argv(channel_fd: int, started_fd: int, started: bytes, command: str) -> list[str]:
    """What the sandbox runs in allowlist mode instead of its usual first shell: the bridge, which becomes
    `/bin/sh -c command`. `channel_fd` is the sandbox's end of the engine's socketpair; `started` is written to
    the pipe `started_fd` once the proxy listens."""
    # The interpreter itself, not a virtualenv's link to it: a venv under /tmp is hidden by the sandbox's own /tmp.
    python = os.path.realpath(sys.executable)
    return [python, "-I", "-S", "-c", BRIDGE_SOURCE, str(channel_fd), str(started_fd), started.decode(), command]

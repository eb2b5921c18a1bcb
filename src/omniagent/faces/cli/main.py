"""The `omniagent` command line: parses arguments, then hands off to the layer that owns the job.

stdout belongs to the wire for `serve`, `rpc` and `acp`; logs and usage errors go to stderr. Each subcommand is one
`Command` row of `COMMANDS`; the function doing its work is imported only when it runs, so `omniagent agents` stays
fast and `serve`, `rpc` and `acp` answer their first line before asyncio is imported.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from omniagent._version import __version__

DEBUG_ENV = "OMNIAGENT_DEBUG"
EXIT_INTERNAL = 1
EXIT_USAGE = 2  # argparse's code for bad arguments, and ours for no command at all


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    """A command that takes no arguments of its own."""


# A NamedTuple, not a dataclass: `dataclasses` would cost `serve` an import before its hello.
class Command(NamedTuple):
    """One subcommand: its help, its arguments and the function that does its work.

    `runs` names that function as `module:function`; it is called with the parsed arguments as keywords (each
    argument's `dest` is one of its parameters) and returns the exit code.
    """

    name: str
    summary: str  # its line in `omniagent --help`
    description: str  # the head of `omniagent NAME --help`
    runs: str
    arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    examples: str | None = None  # the tail of `omniagent NAME --help`


def print_version() -> int:
    """`omniagent version`: the bare version, for scripts."""
    print(__version__)
    return 0


def _session_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments `run` and `chat` share: which agent, where, which model, whether to ask."""
    parser.add_argument("--agent", metavar="ID", help="the agent to use (default: see above; `omniagent agents`)")
    parser.add_argument(
        "-C", "--cwd", dest="directory", metavar="DIR", help="work in DIR instead of the current directory"
    )
    parser.add_argument("-m", "--model", metavar="MODEL", help="the model the agent should use (its `model` option)")
    parser.add_argument("--yes", action="store_true", help="approve every tool permission without asking")


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("prompt", metavar="PROMPT", help="what to ask the agent (one argument: quote it)")
    _session_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the turn's events as JSON lines")
    parser.add_argument("--mock", metavar="SCRIPT", help=argparse.SUPPRESS)  # tests: a scripted agent (docs/testing.md)


def _hub_token_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--token", metavar="TOKEN", help="the hub's token (default: $OMNIAGENT_HUB_TOKEN, else this machine's hub's)"
    )


def _chat_arguments(parser: argparse.ArgumentParser) -> None:
    _session_arguments(parser)
    parser.add_argument("--resume", action="store_true", help="continue the last chat in this directory")
    parser.add_argument(
        "--attach",
        metavar="URL[/SESSION]",
        help="chat on a session of the hub at URL (a new one with --agent when no SESSION); Ctrl-D detaches",
    )
    _hub_token_argument(parser)
    parser.add_argument("--mock", metavar="SCRIPT", help=argparse.SUPPRESS)


def _batch_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "tasks",
        metavar="TASKS",
        type=Path,
        help="the task file (one JSON task per line), or a Harbor task folder, or a folder of them",
    )
    parser.add_argument(
        "--agent",
        dest="agents",
        metavar="ID",
        action="append",
        default=[],
        help="run every task with ID (repeat to compare)",
    )
    parser.add_argument(
        "-j", "--jobs", type=int, default=4, metavar="N", help="runs at a time (default 4; a local Ray cluster's CPUs)"
    )
    parser.add_argument(
        "--out", type=Path, default=Path("batch-out"), metavar="DIR", help="where results go (default ./batch-out)"
    )
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="run on a Ray cluster (no ADDRESS: a local one on 127.0.0.1); needs omniagent[ray]",
    )
    parser.add_argument(
        "--allow-unsandboxed-auto",
        dest="allow_unsandboxed",
        action="store_true",
        help="let `auto` permissions approve the tools of an agent whose commands do not run sandboxed",
    )
    parser.add_argument(
        "--host-image",
        action="store_true",
        help="run Harbor tasks whose environment needs an image omniagent cannot build on this machine's system",
    )
    parser.add_argument(
        "-k",
        "--attempts",
        type=int,
        default=1,
        metavar="N",
        help="trials of every task by every agent (default 1); job.json then has pass@k for k up to N",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=0,
        metavar="N",
        help="run a trial again up to N times when the infrastructure failed it (workspace, agent start or death; "
        "default 0)",
    )
    parser.add_argument(
        "--json", dest="as_json", action="store_true", help="print the job's result (job.json) instead of the table"
    )


def _agents_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", dest="as_json", action="store_true", help="print the DiscoveryReport as JSON")


def _usage_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", metavar="ID", help="only this agent (see `omniagent agents`)")
    parser.add_argument("--json", dest="as_json", action="store_true", help="print the answers as one JSON document")


def _sessions_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--all", dest="every_directory", action="store_true", help="every directory's, not only this one's"
    )
    parser.add_argument("--json", dest="as_json", action="store_true", help="print the records as JSON")
    parser.add_argument("--hub", metavar="URL", help="the sessions of the hub at URL instead (every agent's)")
    _hub_token_argument(parser)


def _serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mock", metavar="SCRIPT", help="play a mock script (a file or a bundled name) as agent `mock`"
    )


def _engine_arguments(parser: argparse.ArgumentParser) -> None:
    """The data dir of `rpc` and `acp` (whose hub keeps its session index in `hub/` there)."""
    parser.add_argument("--data-dir", type=Path, help="where the engine keeps its store and credentials")


def _hub_arguments(parser: argparse.ArgumentParser) -> None:
    parser.set_defaults(action=None, rotate=False, print_url=False)
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, metavar="N", help="the port (default 8765; 0: any free)")
    parser.add_argument("--agent", metavar="ID", help="the agent a new session runs unless the client says")
    parser.add_argument("--data-dir", type=Path, help="where the hub keeps its token and session index (in hub/)")
    parser.add_argument("--tls-cert", type=Path, metavar="FILE", help="serve HTTPS with this certificate (PEM)")
    parser.add_argument("--tls-key", type=Path, metavar="FILE", help="the certificate's private key (PEM)")
    parser.add_argument(
        "--allow-remote", action="store_true", help="listen beyond loopback without TLS (warns: all in clear)"
    )
    parser.add_argument(
        "--allow-host",
        dest="allow_hosts",
        action="append",
        default=[],
        metavar="NAME",
        help="a Host name clients may use besides loopback's and --host (repeat)",
    )
    parser.add_argument("--max-clients", type=int, default=64, metavar="N", help="connections at once (default 64)")
    parser.add_argument(
        "--batch-dir", type=Path, metavar="OUT", help="serve this batch job's report and files (read-only) at /batch/"
    )
    parser.add_argument("--mock", metavar="SCRIPT", help=argparse.SUPPRESS)  # tests: a scripted agent
    actions = parser.add_subparsers(dest="action", metavar="ACTION", title="actions")
    token = actions.add_parser("token", help="print the hub's bearer token (made if missing)")
    token.add_argument("--rotate", action="store_true", help="replace it first (clients then need the new one)")
    token.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS, help="the data dir, as for the hub")
    page = actions.add_parser("open", help="open the running hub's web page, logged in by a one-time link")
    page.add_argument(
        "--print", dest="print_url", action="store_true", help="print the login link instead of opening a browser"
    )
    page.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS, help="the data dir, as for the hub")


def _acp_arguments(parser: argparse.ArgumentParser) -> None:
    _engine_arguments(parser)
    parser.add_argument(
        "--agent",
        metavar="ID",
        help="serve this agent (claude, codex, pi, opencode, an ACP agent: `omniagent agents`) instead of our engine",
    )
    parser.add_argument("--mock", metavar="SCRIPT", help=argparse.SUPPRESS)  # tests: `--agent mock` plays SCRIPT
    parser.add_argument("--hub", metavar="URL", help="be a client of this hub: its sessions, over its /acp WebSocket")
    parser.add_argument("--session", metavar="ID", help="with --hub: the editor's session/new joins this hub session")
    parser.add_argument("--token", metavar="TOKEN", help="with --hub: the hub's token (else $OMNIAGENT_HUB_TOKEN)")


# In the order `omniagent --help` lists them.
COMMANDS = (
    Command(
        "run",
        "send one prompt to an agent and show the turn",
        "Send one prompt to an agent in a directory, show the turn as it happens, exit when it ends. Without "
        "--agent: our engine when a model provider has a key, else the first installed agent omniagent drives.",
        "omniagent.faces.cli.run:run_command",
        _run_arguments,
        """examples:
  omniagent run "explain what this repository does"
  omniagent run --agent claude -C ~/src/app "fix the failing test"
  omniagent run --yes --json "say hello" | jq -c .kind""",
    ),
    Command(
        "chat",
        "a multi-turn session with an agent in the terminal",
        "A multi-turn session with any agent: type prompts, answer its permission requests inline, /help for "
        "commands. Ctrl-C cancels the running turn; a second Ctrl-C (or Ctrl-D) leaves.",
        "omniagent.faces.cli.chat:run_chat",
        _chat_arguments,
        """examples:
  omniagent chat                      # the default agent, in this directory
  omniagent chat --agent codex -m gpt-5.5
  omniagent chat --resume             # continue the last chat in this directory
  omniagent chat --attach http://127.0.0.1:7777/s3   # a hub's session; Ctrl-D detaches, it goes on""",
    ),
    Command(
        "batch",
        "run many tasks with one or more agents, N at a time or on Ray",
        "Run every task of a JSONL task file, each in a workspace of its own, N at a time on this machine or over a "
        "Ray cluster, with a live progress view; per-task outputs and results.jsonl go to --out. Running the same "
        "command again resumes. See docs/batch.md.",
        "omniagent.faces.cli.batch:run_batch",
        _batch_arguments,
        """examples:
  omniagent batch tasks.jsonl --agent omniagent -j 4 --out runs/
  omniagent batch tasks.jsonl --agent omniagent --agent codex-acp   # compare two agents
  omniagent batch tasks.jsonl --ray                   # a local Ray cluster; --ray HOST:PORT joins one
  omniagent batch harbor-tasks/ --agent omniagent -k 5 --json | jq .agents   # mean reward, pass@1..5
  # run it again to resume: finished tasks are skipped (docs/batch.md)""",
    ),
    Command(
        "agents",
        "list the agent CLIs installed and missing here",
        "List the agent CLIs found on this machine, and the missing ones with the command that installs each.",
        "omniagent.faces.cli.agents:run_agents",
        _agents_arguments,
        """examples:
  omniagent agents
  omniagent agents --json | jq '.missing[].install_hint'""",
    ),
    Command(
        "usage",
        "show your plan's quota left on each logged-in agent",
        "Show each installed agent's plan quota windows (Codex, Claude Code) as bars: the share used and when it "
        "resets; agents that cannot say tell why in one line. Exit 0 when one showed its windows, else 1.",
        "omniagent.faces.cli.usage:run_usage",
        _usage_arguments,
        """examples:
  omniagent usage                     # every installed agent that can say
  omniagent usage --agent codex --json""",
    ),
    Command(
        "sessions",
        "list the chat sessions you can resume, or a hub's sessions",
        "List the chat sessions `omniagent chat --resume` can continue, newest first (this directory's, or all); "
        "with --hub URL, the sessions of that hub (every agent's, with their activity and attached clients).",
        "omniagent.faces.cli.sessions:run_sessions",
        _sessions_arguments,
        """examples:
  omniagent sessions
  omniagent sessions --all --json
  omniagent sessions --hub http://127.0.0.1:7777""",
    ),
    Command(
        "serve",
        "the anyagent sidecar wire on stdin/stdout (for apps)",
        "Serve the anyagent sidecar wire (JSON lines) on stdin/stdout, so an app in any language drives every "
        "agent on the machine through one protocol. See docs/sidecar.md.",
        "omniagent.faces.sidecar.serve:run_sidecar",
        _serve_arguments,
        """examples:
  omniagent serve                     # an app writes commands on stdin, reads lines on stdout
  echo '{"id":1,"cmd":"hello","protocol":1}' | omniagent serve""",
    ),
    Command(
        "rpc",
        "our engine over the yuke JSONL RPC on stdin/stdout (for frontends)",
        "Serve our own agent engine over the yuke JSONL RPC on stdin/stdout: sessions stored durably, tools, "
        "providers. See docs/engine.md.",
        "omniagent.faces.rpc.serve:run_rpc",
        _engine_arguments,
        """examples:
  omniagent rpc
  omniagent rpc --data-dir ./engine-data""",
    ),
    Command(
        "acp",
        "our engine (or any agent) as an ACP agent on stdin/stdout (for editors)",
        "Serve our own agent engine as an Agent Client Protocol agent on stdin/stdout, for editors such as Zed "
        "and JetBrains; with --agent, serve that agent (Claude Code, Codex, …) instead. See docs/acp.md.",
        "omniagent.faces.acp.serve:run_acp",
        _acp_arguments,
        """examples:
  omniagent acp                       # as an editor's agent server, e.g. Zed's agent_servers
  omniagent acp --agent claude        # Claude Code as an ACP agent
  omniagent acp --hub http://127.0.0.1:8765 --session s3   # join a hub's session from an editor""",
    ),
    Command(
        "hub",
        "a server owning sessions of any agent, for many clients (ACP over HTTP/WebSocket)",
        "Serve the hub: sessions of any agent that keep running with no client attached, reached by any number of "
        "clients over ACP (streamable HTTP with SSE, or WebSocket) and the sidecar wire over WebSocket, with a "
        "bearer token, and a web page to watch and answer every session. `omniagent hub token` prints the token; "
        "`omniagent hub open` opens the page logged in. See docs/hub.md.",
        "omniagent.faces.hub.serve:run_hub",
        _hub_arguments,
        """examples:
  omniagent hub                       # http://127.0.0.1:8765/acp
  omniagent hub --port 0 --agent claude
  omniagent hub token                 # the bearer token; --rotate makes a new one
  omniagent hub open                  # the web page of the running hub, logged in (a one-time link)
  omniagent hub --batch-dir OUT       # also serve a batch job's report at /batch/""",
    ),
    Command("version", "print the version", "Print omniagent's version.", "omniagent.faces.cli.main:print_version"),
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="omniagent",
        description="One harness for coding agents: drive any agent CLI on this machine, or our own engine.",
        epilog="Start with `omniagent chat` or `omniagent run PROMPT`; `omniagent COMMAND --help` shows examples.",
    )
    parser.add_argument("--version", action="version", version=f"omniagent {__version__}")
    parser.add_argument("--debug", action="store_true", help=f"show tracebacks of internal errors (or {DEBUG_ENV}=1)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for command in COMMANDS:
        command.arguments(
            sub.add_parser(
                command.name,
                help=command.summary,
                description=command.description,
                epilog=command.examples,
                formatter_class=argparse.RawDescriptionHelpFormatter,
            )
        )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    # httpx's package import loads its own command-line client (click, pygments, rich) when those happen to be
    # installed: tens of ms this process never uses (docs/performance.md). Without it, `httpx.main` only prints
    # that its extra is missing.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    parser = _parser()
    arguments = vars(parser.parse_args(argv))
    debug = arguments.pop("debug") or os.environ.get(DEBUG_ENV, "") not in ("", "0")
    name = arguments.pop("command")
    if name is None:
        parser.print_help(sys.stderr)  # `omniagent` alone: the command list
        return EXIT_USAGE
    try:
        code = _run(name, arguments)
        sys.stdout.flush()  # a closed pipe is met here, not by the interpreter's flush at exit ("Exception ignored")
        return code
    except Exception as error:  # a bug of ours: one sentence for a person, the traceback when asked for
        from omniagent.faces.pipes import leave_quietly, reader_gone

        if reader_gone(error):  # `omniagent … | head`: not a bug, and nobody is left to tell
            return leave_quietly()
        if debug:
            raise
        print(
            f"omniagent: internal error: {type(error).__name__}: {error}\n"
            f"omniagent: this is a bug; run again with --debug (or {DEBUG_ENV}=1) for the traceback to report",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _run(name: str, arguments: dict[str, object]) -> int:
    """Import the command's function and call it with the parsed arguments."""
    command = next(command for command in COMMANDS if command.name == name)
    module, _, function = command.runs.partition(":")
    # `__import__`, not `importlib.import_module`: only the former is seen by `-X importtime`, which is how the
    # start-up cost of each command is measured (docs/performance.md, the lazy-start tests).
    run: Callable[..., int] = getattr(__import__(module, fromlist=[function]), function)
    return run(**arguments)

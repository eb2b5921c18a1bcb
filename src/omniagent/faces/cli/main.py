"""The `omniagent` command line: parses arguments, then hands off to the layer that owns the job.

stdout belongs to the wire for `serve`, `rpc` and `acp`; logs and usage errors go to stderr. Each subcommand's
work lives in its own module (imported lazily, so `omniagent agents` stays fast).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from omniagent._version import __version__

_EXAMPLES = {
    "run": """examples:
  omniagent run "explain what this repository does"
  omniagent run --agent claude -C ~/src/app "fix the failing test"
  omniagent run --yes --json "say hello" | jq -c .kind""",
    "chat": """examples:
  omniagent chat                      # the default agent, in this directory
  omniagent chat --agent codex -m gpt-5.5
  omniagent chat --resume             # continue the last chat in this directory""",
    "batch": """examples:
  omniagent batch tasks.jsonl --agent omniagent -j 4 --out runs/
  omniagent batch tasks.jsonl --agent omniagent --agent codex-acp   # compare two agents
  omniagent batch tasks.jsonl --ray                   # a local Ray cluster; --ray HOST:PORT joins one
  # run it again to resume: finished tasks are skipped (docs/batch.md)""",
    "agents": """examples:
  omniagent agents
  omniagent agents --json | jq '.missing[].install_hint'""",
    "usage": """examples:
  omniagent usage                     # every installed agent that can say
  omniagent usage --agent codex --json""",
    "sessions": """examples:
  omniagent sessions
  omniagent sessions --all --json""",
    "serve": """examples:
  omniagent serve                     # an app writes commands on stdin, reads lines on stdout
  echo '{"id":1,"cmd":"hello","protocol":1}' | omniagent serve""",
    "rpc": """examples:
  omniagent rpc
  omniagent rpc --data-dir ./engine-data""",
    "acp": """examples:
  omniagent acp                       # as an editor's agent server, e.g. Zed's agent_servers""",
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="omniagent",
        description="One harness for coding agents: drive any agent CLI on this machine, or our own engine.",
        epilog="Start with `omniagent chat` or `omniagent run PROMPT`; `omniagent COMMAND --help` shows examples.",
    )
    parser.add_argument("--version", action="version", version=f"omniagent {__version__}")
    parser.add_argument("--debug", action="store_true", help=f"show tracebacks of internal errors (or {DEBUG_ENV}=1)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    def command(name: str, summary: str, description: str) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=summary,
            description=description,
            epilog=_EXAMPLES.get(name),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    run = command(
        "run",
        "send one prompt to an agent and show the turn",
        "Send one prompt to an agent in a directory, show the turn as it happens, exit when it ends. Without "
        "--agent: our engine when a model provider has a key, else the first installed agent omniagent drives.",
    )
    run.add_argument("prompt", metavar="PROMPT", help="what to ask the agent (one argument: quote it)")
    _session_options(run)
    run.add_argument("--json", action="store_true", help="print the turn's events as JSON lines")
    run.add_argument("--mock", metavar="SCRIPT", help=argparse.SUPPRESS)  # tests: a scripted agent (docs/testing.md)

    chat = command(
        "chat",
        "a multi-turn session with an agent in the terminal",
        "A multi-turn session with any agent: type prompts, answer its permission requests inline, /help for "
        "commands. Ctrl-C cancels the running turn; a second Ctrl-C (or Ctrl-D) leaves.",
    )
    _session_options(chat)
    chat.add_argument("--resume", action="store_true", help="continue the last chat in this directory")
    chat.add_argument("--mock", metavar="SCRIPT", help=argparse.SUPPRESS)

    batch = command(
        "batch",
        "run many tasks with one or more agents, N at a time or on Ray",
        "Run every task of a JSONL task file, each in a workspace of its own, N at a time on this machine or over a "
        "Ray cluster, with a live progress view; per-task outputs and results.jsonl go to --out. Running the same "
        "command again resumes. See docs/batch.md.",
    )
    batch.add_argument("tasks", metavar="TASKS.jsonl", type=Path, help="the task file (one JSON task per line)")
    batch.add_argument(
        "--agent", metavar="ID", action="append", default=[], help="run every task with ID (repeat to compare)"
    )
    batch.add_argument(
        "-j", "--jobs", type=int, default=4, metavar="N", help="runs at a time (default 4; a local Ray cluster's CPUs)"
    )
    batch.add_argument(
        "--out", type=Path, default=Path("batch-out"), metavar="DIR", help="where results go (default ./batch-out)"
    )
    batch.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="run on a Ray cluster (no ADDRESS: a local one on 127.0.0.1); needs omniagent[ray]",
    )
    batch.add_argument(
        "--allow-unsandboxed-auto",
        action="store_true",
        help="let `auto` permissions approve the tools of an agent whose commands do not run sandboxed",
    )

    agents = command(
        "agents",
        "list the agent CLIs installed and missing here",
        "List the agent CLIs found on this machine, and the missing ones with the command that installs each.",
    )
    agents.add_argument("--json", action="store_true", help="print the DiscoveryReport as JSON")

    usage = command(
        "usage",
        "show your plan's quota left on each logged-in agent",
        "Show each installed agent's plan quota windows (Codex, Claude Code) as bars: the share used and when it "
        "resets; agents that cannot say tell why in one line. Exit 0 when one showed its windows, else 1.",
    )
    usage.add_argument("--agent", metavar="ID", help="only this agent (see `omniagent agents`)")
    usage.add_argument("--json", action="store_true", help="print the answers as one JSON document")

    sessions = command(
        "sessions",
        "list the chat sessions you can resume",
        "List the chat sessions `omniagent chat --resume` can continue, newest first (this directory's, or all).",
    )
    sessions.add_argument("--all", action="store_true", help="every directory's, not only this one's")
    sessions.add_argument("--json", action="store_true", help="print the records as JSON")

    serve = command(
        "serve",
        "the anyagent sidecar wire on stdin/stdout (for apps)",
        "Serve the anyagent sidecar wire (JSON lines) on stdin/stdout, so an app in any language drives every "
        "agent on the machine through one protocol. See docs/sidecar.md.",
    )
    serve.add_argument("--mock", metavar="SCRIPT", help="play a mock script (a file or a bundled name) as agent `mock`")

    rpc = command(
        "rpc",
        "our engine over the yuke JSONL RPC on stdin/stdout (for frontends)",
        "Serve our own agent engine over the yuke JSONL RPC on stdin/stdout: sessions stored durably, tools, "
        "providers. See docs/engine.md.",
    )
    rpc.add_argument("--data-dir", type=Path, help="where the engine keeps its store and credentials")

    acp = command(
        "acp",
        "our engine as an ACP agent on stdin/stdout (for editors)",
        "Serve our own agent engine as an Agent Client Protocol agent on stdin/stdout, for editors such as Zed "
        "and JetBrains. See docs/acp.md.",
    )
    acp.add_argument("--data-dir", type=Path, help="where the engine keeps its store and credentials")
    command("version", "print the version", "Print omniagent's version.")
    return parser


def _session_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", metavar="ID", help="the agent to use (default: see above; `omniagent agents`)")
    parser.add_argument("-C", "--cwd", metavar="DIR", help="work in DIR instead of the current directory")
    parser.add_argument("-m", "--model", metavar="MODEL", help="the model the agent should use (its `model` option)")
    parser.add_argument("--yes", action="store_true", help="approve every tool permission without asking")


DEBUG_ENV = "OMNIAGENT_DEBUG"
EXIT_INTERNAL = 1


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    # httpx's package import loads its own command-line client (click, pygments, rich) when those happen to be
    # installed: tens of ms this process never uses (docs/performance.md). Without it, `httpx.main` only prints
    # that its extra is missing.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    parser = _parser()
    args = parser.parse_args(argv)
    debug = args.debug or os.environ.get(DEBUG_ENV, "") not in ("", "0")
    try:
        return _dispatch(parser, args)
    except Exception as error:  # a bug of ours: one sentence for a person, the traceback when asked for
        if debug:
            raise
        print(
            f"omniagent: internal error: {type(error).__name__}: {error}\n"
            f"omniagent: this is a bug; run again with --debug (or {DEBUG_ENV}=1) for the traceback to report",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command == "version":
        print(__version__)
        return 0
    if args.command == "agents":
        from omniagent.faces.cli.agents import run_agents

        return run_agents(as_json=args.json)
    if args.command == "usage":
        from omniagent.faces.cli.usage import run_usage

        return run_usage(agent=args.agent, as_json=args.json)
    if args.command == "serve":
        from omniagent.faces.sidecar.serve import run_sidecar

        return run_sidecar(mock=args.mock)
    if args.command == "run":
        from omniagent.faces.cli.run import RunOptions, run_command

        return run_command(
            RunOptions(
                prompt=args.prompt,
                agent=args.agent,
                yes=args.yes,
                json=args.json,
                mock=args.mock,
                directory=args.cwd,
                model=args.model,
            )
        )
    if args.command == "chat":
        from omniagent.faces.cli.chat import ChatOptions, run_chat

        return run_chat(
            ChatOptions(
                agent=args.agent,
                directory=args.cwd,
                model=args.model,
                yes=args.yes,
                resume=args.resume,
                mock=args.mock,
            )
        )
    if args.command == "batch":
        from omniagent.faces.cli.batch import BatchOptions, run_batch

        return run_batch(
            BatchOptions(
                tasks=args.tasks,
                out=args.out,
                agents=tuple(args.agent),
                jobs=args.jobs,
                ray=args.ray is not None,
                ray_address=args.ray or None,
                allow_unsandboxed=args.allow_unsandboxed_auto,
            )
        )
    if args.command == "sessions":
        from omniagent.faces.cli.sessions import run_sessions

        return run_sessions(every_directory=args.all, as_json=args.json)
    if args.command == "rpc":
        from omniagent.faces.rpc.serve import run_rpc

        return run_rpc(data_dir=args.data_dir)
    if args.command == "acp":
        from omniagent.faces.acp.serve import run_acp

        return run_acp(data_dir=args.data_dir)
    parser.print_help(sys.stderr)  # `omniagent` alone: the command list
    return 2

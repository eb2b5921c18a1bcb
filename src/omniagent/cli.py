"""The `omniagent` command line: parses arguments, then hands off to the layer that owns the job.

stdout belongs to the wire for `serve`, `rpc` and `acp`; logs and usage errors go to stderr. Each subcommand's
work lives in its own module (imported lazily, so `omniagent agents` stays fast).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from omniagent import __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="omniagent", description="One harness for coding agents.")
    parser.add_argument("--version", action="version", version=f"omniagent {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("version", help="print the version")

    agents = sub.add_parser("agents", help="list the agent CLIs installed on this machine")
    agents.add_argument("--json", action="store_true", help="print the DiscoveryReport as JSON")

    serve = sub.add_parser("serve", help="the anyagent sidecar wire on stdin/stdout")
    serve.add_argument("--mock", metavar="SCRIPT", help="play a mock script (a file or a bundled name) as agent `mock`")

    run = sub.add_parser("run", help="send one prompt to an agent in this directory and show the turn")
    run.add_argument("prompt", metavar="PROMPT", help="what to ask the agent")
    run.add_argument("--agent", metavar="ID", help="the agent to use (default: the first ready one; see `agents`)")
    run.add_argument("--yes", action="store_true", help="approve every tool permission without asking")
    run.add_argument("--json", action="store_true", help="print the turn's events as JSON lines")
    run.add_argument("--mock", metavar="SCRIPT", help=argparse.SUPPRESS)  # tests: a scripted agent (docs/testing.md)

    rpc = sub.add_parser("rpc", help="the engine over the yuke JSONL RPC on stdin/stdout")
    rpc.add_argument("--data-dir", type=Path, help="where the engine keeps its store and credentials")

    acp = sub.add_parser("acp", help="the engine as an ACP agent on stdin/stdout (for editors such as Zed)")
    acp.add_argument("--data-dir", type=Path, help="where the engine keeps its store and credentials")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "version":
        print(__version__)
        return 0
    if args.command == "agents":
        from omniagent.runtime.agents_command import run_agents

        return run_agents(as_json=args.json)
    if args.command == "serve":
        from omniagent.runtime.sidecar import run_sidecar

        return run_sidecar(mock=args.mock)
    if args.command == "run":
        from omniagent.cli_run import RunOptions, run_command

        return run_command(
            RunOptions(prompt=args.prompt, agent=args.agent, yes=args.yes, json=args.json, mock=args.mock)
        )
    if args.command == "rpc":
        from omniagent.engine.rpc import run_rpc

        return run_rpc(data_dir=args.data_dir)
    if args.command == "acp":
        from omniagent.acp.serve import run_acp

        return run_acp(data_dir=args.data_dir)
    parser.print_usage(sys.stderr)
    return 2

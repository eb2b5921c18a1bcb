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

    rpc = sub.add_parser("rpc", help="the engine over the yuke JSONL RPC on stdin/stdout")
    rpc.add_argument("--data-dir", type=Path, help="where the engine keeps its store and credentials")
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
    if args.command == "rpc":
        from omniagent.engine.rpc import run_rpc

        return run_rpc(data_dir=args.data_dir)
    parser.print_usage(sys.stderr)
    return 2

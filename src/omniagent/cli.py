"""The `omniagent` command line: parses arguments, sets up stdio and logging, maps outcomes to exit codes."""

from __future__ import annotations

import argparse
import sys

from omniagent import __version__


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="omniagent", description=__doc__)
    parser.add_argument("--version", action="version", version=f"omniagent {__version__}")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("version", help="print the version")
    args = parser.parse_args(argv)
    if args.command == "version":
        print(__version__)
        return 0
    parser.print_usage(sys.stderr)
    return 2

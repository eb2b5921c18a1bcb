"""The command line: every `omniagent` command, its parser and its terminal UI."""

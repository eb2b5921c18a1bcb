"""The engine's MCP client: the MCP servers of each session and their tools (docs/engine.md, "MCP servers").

`config.py` reads server settings (a face's, the config files'), `names.py` namespaces tool names, `connection.py`
runs one server through the official `mcp` SDK, and `servers.py` keeps each session's servers and offers their
tools to its runs. Only `connection.py` imports the SDK, and only once a session has a server to start.
"""

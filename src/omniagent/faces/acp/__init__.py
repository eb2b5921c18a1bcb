"""`omniagent acp`: the engine served as an ACP agent (v1 or v2) on stdin/stdout."""

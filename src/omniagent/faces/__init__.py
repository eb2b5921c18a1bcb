"""The faces: each way into omniagent (the command line, the sidecar, the yuke RPC, ACP). The top layer."""

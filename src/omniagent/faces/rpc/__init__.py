"""`omniagent rpc`: the engine over the yuke JSONL RPC on stdin/stdout."""

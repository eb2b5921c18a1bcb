"""The pi adapter: pi's JSONL RPC (launch and turns, rpc, info, translate)."""

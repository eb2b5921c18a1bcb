"""The Codex adapter: `codex app-server` over JSON-RPC (launch, info, translate, tools, requests, usage)."""

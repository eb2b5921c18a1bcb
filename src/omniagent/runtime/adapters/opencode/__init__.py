"""The opencode adapter: `opencode serve` over HTTP and SSE (server, driver, info, translate)."""

"""`omniagent hub`: the hub over HTTP and WebSocket (ACP, and the sidecar wire at `/sidecar`)."""

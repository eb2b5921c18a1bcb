"""`omniagent hub`: the hub's sessions served over HTTP and WebSocket (ACP's streamable HTTP and WebSocket transports,
the sidecar wire over WebSocket), behind a bearer token and Host/Origin checks. See docs/hub.md."""

"""Any agent as an ACP agent: a hub session (Claude Code, Codex, pi, opencode, an ACP agent, the mock) served to an ACP
client, many clients per session (`omniagent acp --agent ID` on stdio; `faces/hub` over HTTP and WebSocket)."""

"""The wires served over sessions, shared by the faces: ACP (`serving/acp`) and the anyagent sidecar
(`serving/sidecar`) over runtime and hub sessions. A face only carries bytes to and from these: stdio
(`faces/acp`, `faces/sidecar`) or the hub's HTTP and WebSocket server (`faces/hub`)."""

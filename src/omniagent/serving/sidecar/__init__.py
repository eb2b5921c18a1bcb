"""The anyagent sidecar wire served over runtime or hub sessions, whatever carries its lines."""

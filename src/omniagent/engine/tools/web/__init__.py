"""The fetch tool: where it may connect, and HTML as readable text."""

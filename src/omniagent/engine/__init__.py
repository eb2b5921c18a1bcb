"""The engine: our own agent loop with durable sessions, runs, providers and tools."""

"""The adapter for our own engine, driven in process through the engine's API (host, launch, info, translate)."""

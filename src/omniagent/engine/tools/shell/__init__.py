"""The exec tool; the sandbox its commands run in is the layer below the engine, `omniagent.sandbox`."""

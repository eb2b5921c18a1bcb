"""Open interactions of the engine: permission asks, the model's questions, and secret answers."""

"""Runs: admission of inputs, the run executor (rounds of model call and tools), its draft and tool calls."""

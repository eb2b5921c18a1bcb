"""Runs: admission of inputs, the run executor (rounds of model call and tools), its draft, tool calls and plan."""

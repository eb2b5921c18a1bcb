"""LLM provider clients behind one neutral seam.

What this layer is: request bodies and streamed answers of each provider wire (Anthropic Messages, OpenAI Chat
Completions, OpenAI Responses) translated to and from the provider-neutral IR in `neutral.py`, plus what the engine
needs to resolve a model to a provider (catalog, credentials, `resolve.py`) and to decide on retries (failures,
retry).
What it is not: the run loop. It never retries, sleeps, or decides what a turn does; `engine.run.executor` does.
Below: httpx. Above: `engine.run.executor`, which calls `Provider.stream()` and drives `retry.next_delay()`.
"""

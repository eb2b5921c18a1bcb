"""How the fake LLM server answers, one module per API: the body (or SSE stream) a scripted step becomes."""

"""One client per provider wire (Anthropic, OpenAI Chat / Responses, Gemini), over one transport and SSE."""

"""The ACP adapter: every ACP agent (Gemini CLI, Qwen Code, ...) through our ACP client.

`client` drives an agent (spawn, initialize, sessions, prompt); `launch`, `info`, `translate`, `prompt` and
`extensions` are the adapter's jobs, as in every adapter folder.
"""

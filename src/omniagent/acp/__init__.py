"""ACP behaviour: `client` drives any ACP agent (v1 or v2); `versions` holds the v1/v2 differences as data.

The wire models are in `protocols.acp`.
"""

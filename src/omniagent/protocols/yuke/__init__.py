"""Typed models of the yuke JSONL RPC (the yuke project's published type documentation): no I/O, no behaviour.

The method and broadcast tables live in `methods.py`; the envelope and error codes in `envelope.py`.
"""

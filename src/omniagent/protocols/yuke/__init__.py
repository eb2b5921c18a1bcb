"""Typed models of the yuke JSONL RPC (`shared/spec/yuke-rpc.txt`): no I/O, no behaviour.

The method and broadcast tables live in `methods.py`; the envelope and error codes in `envelope.py`.
"""

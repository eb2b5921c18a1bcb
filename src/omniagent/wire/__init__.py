"""Bytes and envelopes: line framing, our own stdio, child processes, JSON-RPC correlation.

This layer knows no protocol's methods; `protocols` (typed models) and the behaviour layers sit above it.
"""

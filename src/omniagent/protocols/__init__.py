"""Typed wire models, one subpackage per wire. No I/O, no asyncio, no behaviour; import the wire you mean."""

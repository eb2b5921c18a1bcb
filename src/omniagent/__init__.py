"""omniagent: one harness for coding agents.

Two things behind one API: a runtime that drives the agent CLIs already on the machine behind one
normalized event stream, and an engine, our own agent loop that calls LLM providers itself.
"""

__version__ = "0.1.0"

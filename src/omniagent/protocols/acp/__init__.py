"""Agent Client Protocol models: `v1` (what real agents speak) and `v2` (the draft), generated from the JSON schemas
in `schema/` by `scripts/gen_acp_models.py`; `methods` maps each version's methods to their models.

Import the version you mean (`from omniagent.protocols.acp import v2`); nothing is re-exported here.
"""

"""Agent slots: agents.json (named model and prompt presets for child agents) and the `agents.*` methods."""

"""Providers and models as data: the built-in table, providers.json, and which keys are missing."""

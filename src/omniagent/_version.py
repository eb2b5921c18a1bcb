"""The package version, in a module of its own so that nothing imports `omniagent` itself for it."""

__version__ = "0.1.0"

"""Accounts: the `catalog.*` and `auth.*` methods, and the running device logins."""

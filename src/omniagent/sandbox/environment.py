"""A confined command's environment variables: rebuilt from an allowlist when sandboxed, everything but keys when not.

What this is not: the policy that says which mode and which extra variables (policy.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from omniagent.sandbox.policy import SandboxPolicy

__all__ = ["child_env"]

# Environment variables that are passed through to a sandboxed command (when set); everything else is dropped.
ENV_ALLOWLIST = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "COLUMNS", "LINES", "NO_COLOR"}
)
# Variables with these prefixes pass too: locale settings only.
ENV_ALLOWED_PREFIXES = ("LC_",)
# Names that hold keys in every mode, besides the names providers.json gives.
SECRET_ENV_SUFFIXES = ("_API_KEY",)
# Names that hold a shared store's URL or password (docs/fleet.md): never handed to a command either.
SECRET_ENV_NAMES = frozenset({"OMNIAGENT_STORE", "PGPASSWORD"})
# Non-interactive settings so pagers and credential prompts never wait for a terminal that is not there.
CHILD_ENV_OVERRIDES: Mapping[str, str] = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


def child_env(policy: SandboxPolicy, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The command's environment: an allowlist when sandboxed, everything but keys when not; plus `extra_env`."""
    source = os.environ if environ is None else environ

    def secret(name: str) -> bool:
        upper = name.upper()
        return name in policy.secret_env or upper.endswith(SECRET_ENV_SUFFIXES) or upper in SECRET_ENV_NAMES

    if policy.mode == "sandboxed":
        env = {
            k: v
            for k, v in source.items()
            if (k in ENV_ALLOWLIST or k.startswith(ENV_ALLOWED_PREFIXES)) and not secret(k)
        }
        env["TMPDIR"] = "/tmp"
    else:
        env = {k: v for k, v in source.items() if not secret(k)}
    env.update(CHILD_ENV_OVERRIDES)
    env.update(policy.extra_env)
    return env

"""The pinned agent packages, installed on first use by `scripts/install_agents.py` (the one installer CI runs too).

An install failure is a test error with npm's output, never a skip: CI has the npm registry, so a failure there is
a real problem.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "install_agents.py"


@functools.cache
def installer() -> ModuleType:
    """`scripts/install_agents.py` as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("install_agents", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class body runs
    spec.loader.exec_module(module)
    return module


def version(name: str) -> str:
    """The pinned version of `name` (a key of versions.json)."""
    return str(installer().pinned()[name].version)


def entry(name: str) -> Path:
    """The entry file of `name`, installing the pinned package first if needed. Raises InstallError."""
    module = installer()
    path: Path = module.install(module.pinned()[name])
    return path

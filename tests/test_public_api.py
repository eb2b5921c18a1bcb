"""The public surface is exactly `omniagent.__all__` (house style: no export by accident)."""

import subprocess
import sys

import omniagent


def test_all_is_exact_sorted_and_every_name_resolves() -> None:
    """Our choice (httpx style): `__all__` lists the public names, sorted, and each one imports."""
    assert omniagent.__all__ == sorted(omniagent.__all__)
    for name in omniagent.__all__:
        assert getattr(omniagent, name) is not None
    assert omniagent.Runtime.__module__ == "omniagent.runtime.runtime"


def test_importing_omniagent_does_not_import_the_runtime() -> None:
    """The command line imports `omniagent` first; the runtime loads only when a name is used."""
    code = "import sys, omniagent; print('omniagent.runtime.runtime' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

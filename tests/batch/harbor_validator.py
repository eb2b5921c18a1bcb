"""Harbor's own ATIF validator, the second check of every `trajectory.json` the tests read (`atif.load`).

`harbor.utils.trajectory_validator` of the pinned `harbor` wheel on PyPI (Apache-2.0, the Harbor authors). Harbor
declares Python 3.12 and a large dependency tree, but this module and the pydantic models it validates with load on
3.11 with pydantic alone (which omniagent has through the MCP SDK): the wheel is fetched once from PyPI without its
dependencies and unpacked into the tests' cache, beside the real agents' npm packages, and imported from there.
CI fetches it before the tests (`python -m tests.batch.harbor_validator`), as it installs those packages; a failing
fetch is a test error with pip's output, never a skip.
"""

from __future__ import annotations

import functools
import importlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from tests.e2e.agents.packages import installer

PACKAGE, VERSION = "harbor", "0.20.0"
MODULE = "harbor.utils.trajectory_validator"


def wheel_dir() -> Path:
    """Where the unpacked wheel lives: `pypi/harbor-VERSION` beside the npm cache."""
    return installer().cache_dir().parent / "pypi" / f"{PACKAGE}-{VERSION}"


def ensure() -> Path:
    """The unpacked wheel, fetched first when missing. It is unpacked beside and renamed into place, so an
    interrupted fetch never looks installed."""
    target = wheel_dir()
    if (target / Path(*MODULE.split("."))).with_suffix(".py").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", "3.12"]
        fetched = subprocess.run(
            [*pip, "--quiet", "--dest", scratch, f"{PACKAGE}=={VERSION}"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if fetched.returncode != 0:
            raise RuntimeError(f"pip could not fetch {PACKAGE}=={VERSION}:\n{fetched.stdout}{fetched.stderr}")
        (wheel,) = Path(scratch).glob("*.whl")
        unpacked = Path(scratch) / "unpacked"
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(unpacked)
        try:
            os.rename(unpacked, target)
        except OSError:  # another process put it there first
            if not target.is_dir():
                raise
    return target


@functools.cache
def _validator_class() -> Any:
    # Appended, not prepended: the wheel's `harbor` package can shadow nothing of ours or of the venv's.
    sys.path.append(str(ensure()))
    return importlib.import_module(MODULE).TrajectoryValidator


def errors(trajectory: dict[str, Any]) -> list[str]:
    """What Harbor's validator finds wrong with `trajectory` (nothing: valid)."""
    validator = _validator_class()()
    if validator.validate(trajectory):
        return []
    return [str(error) for error in validator.get_errors()]


if __name__ == "__main__":
    print(ensure())

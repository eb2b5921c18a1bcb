"""What a face of the engine (`omniagent rpc`, `omniagent acp`) knows before the engine exists: where the engine's
data and config live, and how long one input line may be. Standard library and platformdirs only, so a face can
answer its handshake without importing the engine (docs/performance.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs

if TYPE_CHECKING:
    from omniagent.engine.providers.catalog.missing_keys import MissingKey

# One request line at most: yuke's 1 MiB message cap plus 64 KiB of envelope.
MAX_LINE_BYTES = 1024 * 1024 + 64 * 1024
# asyncio stream buffer for stdin; above the line cap so a long line is framed, not a stream error.
STDIN_LIMIT = 4 * MAX_LINE_BYTES


def engine_dirs(data_dir: Path | None) -> tuple[Path, Path]:
    """(data dir, config dir): `--data-dir` (else OMNIAGENT_DATA_DIR) for both when given, else the user data and
    config dirs; resolved."""
    env_dir = os.environ.get("OMNIAGENT_DATA_DIR")
    chosen = data_dir or (Path(env_dir) if env_dir else None)
    if chosen is not None:
        return chosen.resolve(), chosen.resolve()
    return (
        Path(platformdirs.user_data_dir("omniagent")).resolve(),
        Path(platformdirs.user_config_dir("omniagent")).resolve(),
    )


def missing_keys_before_the_engine(data_dir: Path | None) -> list[MissingKey]:
    """Which providers lack a key, for a face that has not opened its engine (`--data-dir`, else the environment's
    or the user's dirs): from the built-in table when no providers.json exists, else from the catalog (which reads
    the file; a bad file counts as none, as the engine reports it)."""
    from omniagent.engine.providers.auth.credentials import CredentialStore
    from omniagent.engine.providers.catalog.missing_keys import builtin_missing_keys

    data, config_dir = engine_dirs(data_dir)
    credentials = CredentialStore(data)
    missing = builtin_missing_keys(config_dir, credentials, os.environ)
    if missing is not None:
        return missing
    from omniagent.engine.providers.catalog.table import load_catalog

    return load_catalog(config_dir, credentials, None).missing_keys()

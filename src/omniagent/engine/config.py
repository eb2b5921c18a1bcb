"""What a face of the engine (`omniagent rpc`, `omniagent acp`) knows before the engine exists: where the engine's
data and config live, and how long one input line may be. Standard library and platformdirs only, so a face can
answer its handshake without importing the engine (docs/performance.md).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

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

"""The yuke `initialize` answer: what `omniagent rpc` says before the engine exists.

The answer needs only the engine's version, the session revision and the catalog revision. The session revision
lives in memory and starts at 0 in every process, so it is 0 until the engine has opened; the catalog revision
comes from the provider catalog alone (providers.json and the key file). So `omniagent rpc` answers `initialize`
without opening the engine's store, providers or HTTP client (docs/performance.md), and `Engine` gives the same
answer once it is open. A first `initialize` is answered before asyncio is imported (`first_reply`, from
`faces/rpc/serve.py`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from omniagent._version import __version__
from omniagent.engine.config import engine_dirs
from omniagent.engine.providers.auth.credentials import CredentialStore
from omniagent.engine.providers.catalog.table import load_catalog
from omniagent.protocols.yuke.base import Empty, decode
from omniagent.protocols.yuke.envelope import PROTOCOL_VERSION
from omniagent.protocols.yuke.initialize import EngineInfo, InitializeResult


def initialize_result(session_revision: int, catalog_rev: str) -> InitializeResult:
    """The `initialize` result."""
    return InitializeResult(
        protocol=PROTOCOL_VERSION,
        engine=EngineInfo(version=__version__),
        session_revision=session_revision,
        catalog_rev=catalog_rev,
    )


def before_the_engine(data_dir: Path, config_dir: Path) -> InitializeResult:
    """The `initialize` result of an engine not opened yet (a bad providers.json is reported when it opens)."""
    return initialize_result(0, load_catalog(config_dir, CredentialStore(data_dir), None).rev)


def first_reply(data_dir: Path | None, params: Any) -> Any:
    """The `initialize` result as JSON data, for a face's first reply (`wire/first_request.py`) before the engine and
    asyncio exist. Params `initialize` refuses raise (DecodeError): the face then answers the line as any other."""
    decode(Empty, {} if params is None else params)
    return msgspec.to_builtins(before_the_engine(*engine_dirs(data_dir)))

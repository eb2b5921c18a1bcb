"""Diagnostics are `logging` on stderr, named after the face that owns the process, turned up or down with
`OMNIAGENT_LOG` (issue 15; docs/engine.md); stdout carries only the wire."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TIMEOUT = 30.0  # seconds for one `omniagent rpc` process to answer and exit
# `initialize` is answered before the engine opens; the next request opens it (and it reads providers.json).
REQUESTS = b'{"id":"1","method":"initialize"}\n{"id":"2","method":"catalog.list"}\n'


def _rpc(data: Path, level: str | None) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMNIAGENT_")}
    if level is not None:
        env["OMNIAGENT_LOG"] = level
    argv = [sys.executable, "-m", "omniagent", "rpc", "--data-dir", str(data)]
    return subprocess.run(argv, input=REQUESTS, capture_output=True, env=env, timeout=TIMEOUT, check=False)


@pytest.mark.parametrize(("level", "logged"), [(None, True), ("debug", True), ("error", False)])
def test_a_bad_providers_file_is_logged_on_stderr_under_the_face_name(
    tmp_path: Path, level: str | None, logged: bool
) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    providers = data / "providers.json"
    providers.write_text("{not json")
    providers.chmod(0o600)
    done = _rpc(data, level)
    assert done.returncode == 0
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["id"] == "1" and "result" in lines[0]
    stderr = done.stderr.decode()
    assert ("omniagent rpc: WARNING omniagent.engine.model_access: " in stderr) is logged
    assert "Traceback" not in stderr

"""Generated artefacts are current: protocols/acp/v1.py and v2.py equal fresh generator output."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ACP = ROOT / "src" / "omniagent" / "protocols" / "acp"


def test_acp_models_are_regenerated_from_the_current_schemas() -> None:
    """House style: a staleness test covers every generated artefact (`gen_acp_models.py --check`)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_acp_models.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_generated_files_name_their_source_and_its_hash() -> None:
    """House style: generated files start with "Generated from X by scripts/Y; do not edit" and the schema sha256."""
    for version in ("v1", "v2"):
        schema = ACP / "schema" / f"acp-{version}.schema.json"
        head = (ACP / f"{version}.py").read_text().splitlines()[:2]
        assert head[0].startswith(f"# Generated from src/omniagent/protocols/acp/schema/{schema.name}")
        assert "by scripts/gen_acp_models.py; do not edit" in head[0]
        assert head[1] == f"# Schema sha256: {hashlib.sha256(schema.read_bytes()).hexdigest()}"

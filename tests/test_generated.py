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


def test_the_pages_markdown_renderer_is_markdown_it_as_pinned() -> None:
    """The hub page's vendored markdown-it and its licence are the files `scripts/vendor_markdown_it.py` pins by
    SHA-256 (checked offline; the script fetches them again with `npm pack`), and the page serves them as they are."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "vendor_markdown_it.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    from omniagent.faces.hub.web.routes import load_assets

    vendor = ROOT / "src" / "omniagent" / "faces" / "hub" / "web" / "static" / "vendor"
    served = load_assets()["vendor/markdown-it.esm.min.mjs"].body
    assert served == (vendor / "markdown-it.esm.min.mjs").read_bytes()
    assert served.startswith(b"/*! markdown-it 15.0.3 ")

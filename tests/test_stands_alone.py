"""The repository stands alone: nothing in it reads or names a folder beside the clone, and the specs the tests
validate against ship inside it with their source and licence."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# A path that climbs out of the clone to a sibling folder, or names the workspace's shared notes.
OUTSIDE = re.compile(r"\.\./shared|[\"']shared[\"']|shared/(?:spec|docs)|parents\[\d+\]\s*/\s*[\"']shared")


def _tracked() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / name for name in listed.splitlines() if name.endswith((".py", ".json", ".toml", ".sh", ".mjs"))]


def test_no_file_reads_or_names_a_folder_beside_the_clone() -> None:
    offenders = []
    for path in _tracked():
        if path.name == "test_stands_alone.py" or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    ci = ROOT / ".ci" / "run"
    offenders += [f".ci/run: {line}" for line in ci.read_text().splitlines() if OUTSIDE.search(line)]
    assert offenders == []


def test_every_spec_the_tests_validate_against_is_in_the_repository_with_its_source() -> None:
    schemas = sorted((ROOT / "src" / "omniagent" / "protocols").glob("*/schema/*.schema.json"))
    assert {path.name for path in schemas} == {
        "acp-v1.schema.json",
        "acp-v2.schema.json",
        "acp-v2-alpha.2.schema.json",
        "anyagent-wire.schema.json",
    }
    for path in schemas:
        readme = (path.parent / "README.md").read_text()
        assert path.name in readme
        assert "Apache-2.0" in readme or "MIT" in readme

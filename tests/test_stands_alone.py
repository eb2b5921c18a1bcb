"""The repository stands alone: nothing in it reads or names a folder beside the clone, and the specs the tests
validate against ship inside it with their source and licence."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# A path that climbs out of the clone to a sibling folder, or names the workspace's shared notes.
OUTSIDE = re.compile(r"\.\./shared|[\"']shared[\"']|shared/(?:spec|docs)|parents\[\d+\]\s*/\s*[\"']shared")
# The team's private reference notes, kept outside the repository, by file name or as a section citation of them
# (the wire's JSON schema, `anyagent-wire.schema.json`, ships in the repository and is fine). Some notes share a
# name with our own docs (acp, providers, architecture), but docs/*.md have no numbered sections, so a numbered
# citation of those names means the notes too; public numbering (an RFC's, JSON-RPC 2.0's) is fine. Spelled in
# pieces, so this file names none of them either.
SECTION = "§"
NOTES = re.compile(
    r"\b(?:anyagent-wire|real-agents|yuke-rpc)\.md\b|\byuke-rpc\.txt\b|\b(?:anyagent(?:-rs)?|real-agents|yuke) "
    + SECTION
    + r"|\b(?i:acp(?: v2 draft)?|providers|architecture|anyagent-wire|real-agents|yuke-rpc)(?:\.md)?\s*"
    + SECTION
)
SOURCES = (".py", ".json", ".toml", ".sh", ".mjs")


def _tracked(suffixes: tuple[str, ...] = SOURCES) -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / name for name in listed.splitlines() if name.endswith(suffixes)]


def _offenders(pattern: re.Pattern[str], paths: list[Path]) -> list[str]:
    """The lines of `paths` (tracked files still on disk, this one aside) and of `.ci/run`, which must exist, that
    `pattern` finds."""
    read = [path for path in paths if path.name != "test_stands_alone.py" and path.is_file()]
    offenders = []
    for path in [*read, ROOT / ".ci" / "run"]:
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return offenders


def test_no_file_reads_or_names_a_folder_beside_the_clone() -> None:
    assert _offenders(OUTSIDE, _tracked()) == []


def test_no_file_names_the_private_reference_notes() -> None:
    """Code, tests, CI and docs say what they mean, or cite docs/*.md and the public wires, never the notes."""
    assert _offenders(NOTES, _tracked((*SOURCES, ".md"))) == []


def test_the_notes_pattern_catches_their_names_and_spares_the_shipped_schema() -> None:
    for note in ("anyagent-wire", "real-agents", "yuke-rpc"):
        assert NOTES.search(f"(docs/{note}.md §3)")
    assert NOTES.search("yuke-rpc" + ".txt")
    assert NOTES.search("anyagent" + " §9.5: cancel")
    assert not NOTES.search("src/omniagent/protocols/sidecar/schema/anyagent-wire.schema.json")
    assert not NOTES.search('docs/acp.md, docs/sidecar.md "Ordering guarantees", RFC 8628 §3.2')

    # Numbered citations of the notes named like our docs (which have no numbered sections), not public numbering.
    for citation in ("providers.md", "docs/providers.md", "architecture", "Architecture", "acp.md", "yuke-rpc"):
        assert NOTES.search(f"({citation} {SECTION}6: retry-after)")
    assert NOTES.search(f"House style (architecture {SECTION}5, httpx's `_exceptions.py`)")
    assert NOTES.search(f"providers.md {SECTION}1/{SECTION}5 headers")
    assert NOTES.search(f"(acp.md {SECTION}3.2, {SECTION}3.3)")
    assert NOTES.search(f"ACP v2 draft {SECTION}5.11: batch in")
    for fine in ("RFC 8628 §3.2", "RFC 6749 §6", "JSON-RPC 2.0 §6 (Batch)", 'docs/providers.md "Errors and retries"'):
        assert not NOTES.search(fine)


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

"""docs/architecture.md maps every module of `acp/`, `wire/` and `engine/` (issue 15): a module added without a line
in the map fails here."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "omniagent"


@pytest.mark.parametrize("layer", ["acp", "wire", "engine"])
def test_every_module_of_the_layer_is_in_the_architecture_map(layer: str) -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    unmapped = [
        str(path.relative_to(PACKAGE))
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        if path.name != "__init__.py" and f"`{path.name}`" not in text
    ]
    assert unmapped == []

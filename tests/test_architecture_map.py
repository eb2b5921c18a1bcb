"""docs/architecture.md's codebase map names every module of omniagent by its path (issue 20), and nothing else.

The map's format, checked here: under "## Codebase map", each package has a heading naming its folder relative to
`src/omniagent/` in backticks (the top level is `src/omniagent/`), then a table whose first column is a file of
that folder in backticks (or a folder ending in `/`). So `engine/run/executor.py` is the row `executor.py` under
the heading `engine/run/`. A module added without its row, a package without its heading, or a row naming a file
that is gone fails here.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "omniagent"
TOP = "src/omniagent/"

# The top-level packages (the layers and `testing`), each checked with its subpackages; "" is the top level's files.
LAYERS = ["wire", "protocols", "sandbox", "engine", "runtime", "batch", "hub", "serving", "faces", "testing"]

_HEADING = re.compile(r"^#{3,4} [^`]*`([\w./]*/)`")
_ROW = re.compile(r"^\| `([^`]+)` \|")


def _map() -> tuple[list[str], set[str]]:
    """(every path the map names, relative to src/omniagent, in order; the folders its headings name)."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("\n## Codebase map\n", 1)[1].split("\n## ", 1)[0]
    named: list[str] = []
    folders: set[str] = set()
    folder: str | None = None
    for line in section.splitlines():
        if line.startswith("#"):
            heading = _HEADING.match(line)
            folder = heading.group(1).removeprefix(TOP) if heading else None
            if folder is not None:
                folders.add(folder)
        elif folder is not None and (row := _ROW.match(line)):
            named.append(folder + row.group(1))
    return named, folders


def _holds_code(init: Path) -> bool:
    """A package's `__init__.py` that defines something is a module of its own; one that only names its package's
    job (or re-exports) is described by the package's heading."""
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        for node in ast.parse(init.read_text()).body
    )


def _modules(layer: str) -> list[str]:
    paths = sorted((PACKAGE / layer).rglob("*.py")) if layer else sorted(PACKAGE.glob("*.py"))
    return [
        str(path.relative_to(PACKAGE))
        for path in paths
        if path.name != "__init__.py" or layer == "" or _holds_code(path)
    ]


def _packages(layer: str) -> list[str]:
    return [f"{init.parent.relative_to(PACKAGE)}/" for init in sorted((PACKAGE / layer).rglob("__init__.py"))]


def test_the_layers_are_every_top_level_package() -> None:
    assert sorted(path.parent.name for path in PACKAGE.glob("*/__init__.py")) == sorted(LAYERS)


@pytest.mark.parametrize("layer", ["", *LAYERS])
def test_every_module_of_the_layer_is_in_the_architecture_map(layer: str) -> None:
    named, _ = _map()
    assert [module for module in _modules(layer) if module not in named] == []


@pytest.mark.parametrize("layer", LAYERS)
def test_every_package_of_the_layer_has_its_heading_or_row(layer: str) -> None:
    named, folders = _map()
    assert [package for package in _packages(layer) if package not in folders | set(named)] == []


def test_everything_the_map_names_exists_once() -> None:
    named, folders = _map()
    assert [path for path in [*named, *folders] if not (PACKAGE / path).exists()] == []
    assert sorted(path for path in set(named) if named.count(path) > 1) == []

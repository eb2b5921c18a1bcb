"""Imports point down the stack only: wire → protocols → runtime | engine | acp → cli (docs/architecture.md)."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "omniagent"

# layer → the omniagent layers it may import (besides itself and the top-level `omniagent`,
# `omniagent.errors` and `omniagent.logs`).
ALLOWED: dict[str, set[str]] = {
    "wire": set(),
    "protocols": set(),
    "testing": set(),
    "engine": {"wire", "protocols"},
    "acp": {"wire", "protocols", "engine"},
    "runtime": {"wire", "protocols", "engine", "acp"},
}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("omniagent.")}


def _layer(module: str) -> str:
    return module.split(".")[1]


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_each_layer_imports_only_the_layers_below_it(layer: str) -> None:
    """House style (architecture §5): a layer never imports one above it; `engine` never imports `runtime`."""
    wrong = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        for module in sorted(_imports(path)):
            target = _layer(module)
            if target not in ALLOWED[layer] | {layer, "errors", "logs", "__init__"} and module != "omniagent":
                wrong.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert wrong == []


def test_protocol_models_do_no_io() -> None:
    """House style: models never do I/O (no asyncio, sockets, subprocesses or sqlite in `protocols`)."""
    banned = {"asyncio", "socket", "subprocess", "sqlite3", "httpx"}
    offenders = []
    for path in sorted((PACKAGE / "protocols").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module.split(".")[0]]
            offenders += [f"{path.name}: {name}" for name in names if name in banned]
    assert offenders == []

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
    "batch": {"wire", "protocols", "engine", "runtime"},
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


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _targets(path: Path, known: set[str]) -> set[str]:
    """The omniagent modules `path` imports (any import, TYPE_CHECKING ones included): `from a.b import c` names
    the module `a.b.c` when there is one, else `a.b`."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.add(child if child in known else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name in known}


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of `graph`, or []."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_no_import_cycle_inside_a_layer(layer: str) -> None:
    """Issue 15: modules of one layer import each other in one direction. A module importing from its own
    package's `__init__` (which re-exports that package's modules) is not counted as a cycle."""
    paths = {_module_name(path): path for path in (PACKAGE / layer).rglob("*.py")}
    known = set(paths)
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        graph[name] = {t for t in _targets(path, known) if t != name and not name.startswith(f"{t}.")}
    assert _cycle(graph) == []


def test_no_engine_module_but_the_root_takes_the_whole_engine() -> None:
    """Issue 15: each engine part is built with what it uses. Only `engine.py` (the composition root) and the rpc
    face, which opens an `Engine` to serve it, import it; no engine function takes an `Engine` parameter."""
    importing = sorted(
        str(path.relative_to(PACKAGE))
        for path in (PACKAGE / "engine").rglob("*.py")
        if path.name not in ("engine.py", "rpc.py")
        and "omniagent.engine.engine" in _targets(path, {"omniagent.engine.engine"})
    )
    taking = sorted(
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in (PACKAGE / "engine").rglob("*.py")
        if path.name != "engine.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.arg)
        and node.annotation is not None
        and "Engine" in ast.unparse(node.annotation).split(".")
    )
    assert importing == [] and taking == []

"""Imports point down the stack only: wire → protocols → sandbox → engine → runtime → batch → faces
(docs/architecture.md)."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "omniagent"

# layer → the omniagent layers it may import (besides itself and the top-level `omniagent`,
# `omniagent.errors`, `omniagent.files` and `omniagent.logs`).
ALLOWED: dict[str, set[str]] = {
    "wire": set(),
    "protocols": set(),
    "testing": set(),
    "sandbox": set(),
    "engine": {"wire", "protocols", "sandbox"},
    "runtime": {"wire", "protocols", "engine", "sandbox"},
    "batch": {"wire", "protocols", "engine", "runtime", "sandbox"},
    "hub": {"wire", "protocols", "runtime"},
    "faces": {"wire", "protocols", "engine", "runtime", "batch", "hub"},
}
# What of the engine its callers may import: the API, and what a face needs to answer its first line before the
# engine exists (standard library and platformdirs only; docs/performance.md).
ENGINE_API = {"omniagent.engine.api"}
ENGINE_START_UP = {
    "omniagent.engine.config",
    "omniagent.engine.errors",
    "omniagent.engine.handshake",
    "omniagent.engine.providers.catalog.missing_keys",
}
# The engine's callers: every face, and the runtime's adapter for our engine.
ENGINE_CALLERS = ("faces", "runtime/adapters/engine")
# What of the sandbox the layers above it import: its API, the package itself (`sandbox/__init__.py`).
SANDBOX_API = "omniagent.sandbox"
SANDBOX_CALLERS = ("engine", "runtime", "batch")


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
    """docs/architecture.md "Layers": a layer never imports one above it; `engine` never imports `runtime`."""
    wrong = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        for module in sorted(_imports(path)):
            target = _layer(module)
            if target not in ALLOWED[layer] | {layer, "errors", "files", "logs", "_version"}:
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


def _graph() -> dict[str, set[str]]:
    paths = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    known = set(paths)
    return {name: {t for t in _targets(path, known) if t != name} for name, path in paths.items()}


def test_no_import_cycle_anywhere() -> None:
    """Issue 20: no import cycle in `src/omniagent`, imports under TYPE_CHECKING and through a package's
    `__init__` (importing `omniagent` itself for `__version__`, say) counted. `__version__` lives in `_version`."""
    assert _cycle(_graph()) == []


def test_the_engine_is_called_only_through_its_api() -> None:
    """Issue 20: the faces and the runtime's engine adapter import the engine's API (`engine/api.py`) and nothing
    else of the engine but the standard-library modules a face needs before the engine exists."""
    known = {_module_name(path) for path in PACKAGE.rglob("*.py")}
    wrong = []
    for caller in ENGINE_CALLERS:
        for path in sorted((PACKAGE / caller).rglob("*.py")):
            for module in sorted(_targets(path, known)):
                if module.startswith("omniagent.engine") and module not in ENGINE_API | ENGINE_START_UP:
                    wrong.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert wrong == []


def test_the_sandbox_is_imported_by_engine_runtime_and_batch_and_imports_none_of_them() -> None:
    """Issue 33: the sandbox is a layer of its own below the engine, the runtime and the batch: each of them runs
    its confined commands (or a workspace view) through it, and it imports none of them, nor the hub or a face."""
    known = {_module_name(path) for path in PACKAGE.rglob("*.py")}
    importing = sorted(
        caller
        for caller in SANDBOX_CALLERS
        if any(
            module.startswith(SANDBOX_API)
            for path in (PACKAGE / caller).rglob("*.py")
            for module in _targets(path, known)
        )
    )
    above = ("engine", "runtime", "batch", "hub", "faces")
    wrong = sorted(
        f"{path.relative_to(PACKAGE)} imports {module}"
        for path in (PACKAGE / "sandbox").rglob("*.py")
        for module in _imports(path)
        if _layer(module) in above
    )
    assert importing == sorted(SANDBOX_CALLERS) and wrong == []


def test_the_sandbox_is_called_only_through_its_api() -> None:
    """Issue 33: the engine, the runtime and the batch import the sandbox's API (`omniagent.sandbox`, the names its
    `__init__.py` exports) and none of its modules, so its inside can change without them."""
    known = {_module_name(path) for path in PACKAGE.rglob("*.py")}
    wrong = sorted(
        f"{path.relative_to(PACKAGE)} imports {module}"
        for caller in SANDBOX_CALLERS
        for path in (PACKAGE / caller).rglob("*.py")
        for module in _targets(path, known)
        if module.startswith(f"{SANDBOX_API}.")
    )
    assert wrong == []


def test_no_package_folder_is_a_heap() -> None:
    """Issue 20: a package holds at most 15 modules of its own (subpackages by concept beyond that). The yuke
    models keep one module per topic of the yuke type docs, as yuke's own `lib/proto/` does."""
    exempt = {"protocols/yuke"}
    crowded = []
    for folder in sorted({p.parent for p in PACKAGE.rglob("*.py")}):
        modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        name = str(folder.relative_to(PACKAGE))
        if len(modules) > 15 and name not in exempt:
            crowded.append(f"{name}: {len(modules)}")
    assert crowded == []


def test_no_family_of_modules_is_told_apart_by_a_name_prefix() -> None:
    """Issue 20: modules of one concept live in one folder, not side by side as `x.py`, `x_a.py`, `x_b.py`."""
    families = []
    for folder in sorted({p.parent for p in PACKAGE.rglob("*.py")}):
        stems = sorted(p.stem for p in folder.glob("*.py") if not p.stem.startswith("_"))
        for stem in stems:
            members = [s for s in stems if s.startswith(f"{stem}_")]
            if len(members) >= 2:
                families.append(f"{folder.relative_to(PACKAGE)}: {stem}, {', '.join(members)}")
    assert families == []


def test_no_engine_module_but_the_root_takes_the_whole_engine() -> None:
    """Issue 15: each engine part is built with what it uses. Only `engine.py` (the composition root) and `api.py`
    (the surface over it) import it; no engine function takes an `Engine` parameter."""
    importing = sorted(
        str(path.relative_to(PACKAGE))
        for path in (PACKAGE / "engine").rglob("*.py")
        if path.name not in ("engine.py", "api.py")
        and "omniagent.engine.engine" in _targets(path, {"omniagent.engine.engine"})
    )
    taking = sorted(
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in (PACKAGE / "engine").rglob("*.py")
        if path.name not in ("engine.py", "api.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.arg)
        and node.annotation is not None
        and "Engine" in ast.unparse(node.annotation).split(".")
    )
    assert importing == [] and taking == []

"""Imports point down the stack only: wire → protocols → sandbox → engine → runtime → hub → serving → faces, batch
beside the hub (docs/architecture.md)."""

import ast
import itertools
import re
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
    "serving": {"wire", "protocols", "engine", "runtime", "hub"},
    "faces": {"wire", "protocols", "engine", "runtime", "batch", "hub", "serving"},
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
# The engine's callers: every face, the wires served over sessions, and the runtime's adapter for our engine.
ENGINE_CALLERS = ("faces", "serving", "runtime/adapters/engine")
# The faces: each a folder of `faces/`; what two of them share lives in `serving/` (or `faces/pipes.py`).
FACES = ("acp", "cli", "hub", "rpc", "sidecar")
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


def test_no_face_imports_another_face() -> None:
    """Issue 33: a face carries one way in; what two faces share (ACP or the sidecar over a session, the hub's
    token) lives in `serving/` under them, so no module of one face imports a module of another."""
    wrong = []
    for face in FACES:
        for path in sorted((PACKAGE / "faces" / face).rglob("*.py")):
            for module in sorted(_imports(path)):
                parts = module.split(".")
                if parts[1] == "faces" and len(parts) > 2 and parts[2] in FACES and parts[2] != face:
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


def _engine_folder(module: str) -> str:
    """The engine part `module` belongs to: its folder right below `engine/` (`run`, `tools`, …), nested folders
    (`providers/clients`, `tools/shell`) being part of theirs, or itself for a module at the engine's top level
    (`live.py`, `engine.py`, …): those are shared pieces (and the composition root), each a part of its own."""
    parts = module.split(".")[2:]  # below `omniagent.engine`
    if not parts:
        return "__init__.py"
    path = PACKAGE.joinpath("engine", *parts)
    return parts[0] if path.is_dir() or len(parts) > 1 else f"{parts[0]}.py"


def _engine_folder_graph() -> dict[str, dict[str, list[str]]]:
    """The engine's parts (see `_engine_folder`) → the parts they import → the module imports that make each arrow
    (`a.b -> c.d`), TYPE_CHECKING and function-level imports counted."""
    graph: dict[str, dict[str, list[str]]] = {}
    for module, targets in _graph().items():
        if not module.startswith("omniagent.engine"):
            continue
        source = _engine_folder(module)
        arrows = graph.setdefault(source, {})
        for target in sorted(targets):
            if target.startswith("omniagent.engine.") and (part := _engine_folder(target)) != source:
                arrows.setdefault(part, []).append(f"{module} -> {target}")
    return graph


def _components(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of `graph` (Tarjan), each sorted, every component after those it imports:
    the order is bottom-up, a layer of the engine per component while there is no loop."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while (member := stack.pop()) != node:
                component.append(member)
            found.append(sorted([*component, node]))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _loop_message(loop: list[str], folders: dict[str, dict[str, list[str]]]) -> str:
    """One loop between engine parts as a sentence: a path round it, then the imports of each arrow in it."""
    members = set(loop)
    path = _cycle({part: set(folders[part]) & members for part in loop})
    lines = [f"engine parts import each other in a loop: {' -> '.join(path)}"]
    lines += [f"  {a} -> {b}: {'; '.join(folders[a][b])}" for a, b in itertools.pairwise(path)]
    return "\n".join(lines)


def test_the_engine_parts_import_each_other_in_no_loop() -> None:
    """Issue 33: the engine's parts (its folders, and its top-level modules; `_engine_folder`) form layers: their
    import graph has no loop, TYPE_CHECKING imports counted. A failure names the loop and the imports making it."""
    folders = _engine_folder_graph()
    loops = [c for c in _components({part: set(arrows) for part, arrows in folders.items()}) if len(c) > 1]
    assert not loops, "\n".join(_loop_message(loop, folders) for loop in loops)


def _declared_layers() -> list[list[str]]:
    """docs/architecture.md "The engine's layers": its table's lines top-down, each the parts on that line (a folder
    as `run/`, a module as `live.py`, the description after two spaces)."""
    text = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text()
    section = text.split("\n### The engine's layers\n", 1)[1]
    block = section.split("```text\n", 1)[1].split("```", 1)[0]
    return [
        [name.removesuffix("/") for name in re.split(r"\s{2,}", line.strip(), maxsplit=1)[0].split(" · ")]
        for line in block.splitlines()
    ]


def test_the_engine_parts_import_only_parts_on_a_lower_line_of_the_declared_layers() -> None:
    """Issue 33: docs/architecture.md "The engine's layers" lists every part of the engine once (the package's own
    `__init__.py` is a docstring), and each part imports only parts on a lower line of it."""
    layers = _declared_layers()
    line_of = {part: number for number, line in enumerate(layers) for part in line}
    folders = _engine_folder_graph()
    parts = set(folders) - {"__init__.py"}
    listed = [part for line in layers for part in line]
    assert sorted(listed) == sorted(parts), (
        f"not listed: {sorted(parts - set(listed))}; listed but no part: {sorted(set(listed) - parts)}; "
        f"listed twice: {sorted({p for p in listed if listed.count(p) > 1})}"
    )
    wrong = [
        f"{source} (line {line_of[source] + 1}) imports {target} (line {line_of[target] + 1}): {'; '.join(imports)}"
        for source in sorted(parts)
        for target, imports in sorted(folders[source].items())
        if line_of[target] <= line_of[source]
    ]
    assert wrong == []


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
    """Issue 20: modules of one concept live in one folder, not side by side as `x.py`, `x_a.py`, `x_b.py`, nor as
    three or more `x_a.py`, `x_b.py`, `x_c.py` with no `x.py` (issue 33: the fake server's `render_*.py` were such a
    family). Two siblings such as `openai_chat.py` and `openai_responses.py` are one API's two protocols."""
    families = []
    for folder in sorted({p.parent for p in PACKAGE.rglob("*.py")}):
        stems = sorted(p.stem for p in folder.glob("*.py") if not p.stem.startswith("_"))
        prefixes = {stem.split("_", 1)[0] for stem in stems if "_" in stem}
        for stem in sorted(set(stems) | prefixes):
            members = [s for s in stems if s.startswith(f"{stem}_")]
            if len(members) >= (2 if stem in stems else 3):
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


if __name__ == "__main__":
    # `python tests/test_layers.py`: the engine's parts bottom-up, and what makes each loop between them.
    folders = _engine_folder_graph()
    for component in _components({part: set(arrows) for part, arrows in folders.items()}):
        print(" · ".join(component))
        for source in component if len(component) > 1 else ():
            for target in sorted(set(folders[source]) & set(component)):
                print(f"    {source} -> {target}: " + "; ".join(folders[source][target]))

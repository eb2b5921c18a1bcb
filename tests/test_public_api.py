"""The public surface is exactly `omniagent.__all__` and `omniagent.events.__all__` (house style: no export by
accident), and the README's Python example uses nothing else."""

import ast
import re
import subprocess
import sys
import typing
from pathlib import Path

import omniagent
import omniagent.events
from omniagent.protocols.sidecar import agents as wire_agents
from omniagent.protocols.sidecar import base as wire_base
from omniagent.protocols.sidecar import events as wire_events

README = Path(__file__).resolve().parents[1] / "README.md"

# The modules an app imports omniagent through; everything else is internal and may move.
PUBLIC_MODULES = {"omniagent": omniagent, "omniagent.events": omniagent.events}


def test_all_is_exact_sorted_and_every_name_resolves() -> None:
    """Our choice (httpx style): `__all__` lists the public names, sorted, and each one imports."""
    assert omniagent.__all__ == sorted(omniagent.__all__)
    for name in omniagent.__all__:
        assert getattr(omniagent, name) is not None
    assert omniagent.Runtime.__module__ == "omniagent.runtime.runtime"


def test_importing_omniagent_does_not_import_the_runtime_or_the_events() -> None:
    """The command line imports `omniagent` first; the runtime and the event models load only when used."""
    code = (
        "import sys, omniagent; "
        "print(sorted(m for m in ('omniagent.runtime.runtime', 'omniagent.events', "
        "'omniagent.protocols.sidecar.events') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_events_all_is_exact_and_sorted() -> None:
    """`omniagent.events` names exactly its `__all__`, sorted: every event kind, every stop reason arm."""
    names = omniagent.events.__all__
    assert names == sorted(names)
    public = {name for name in vars(omniagent.events) if not name.startswith("_")}
    assert public == set(names)
    kinds = {kind.__name__ for kind in wire_events.EVENT_KINDS}
    stops = {arm.__name__ for arm in typing.get_args(wire_events._STOP_REASONS)}
    assert kinds <= set(names) and stops <= set(names) and {"Event", "EventKind", "StopReason"} <= set(names)
    models = (wire_events, wire_agents, wire_base)
    assert [n for n in names if not any(getattr(omniagent.events, n) is getattr(m, n, None) for m in models)] == []


def _readme_python_imports() -> list[tuple[str, list[str]]]:
    """(module, names) for each import of the README's Python examples, `import module` as (module, []), and each
    `omniagent.X` the examples use as ("omniagent", ["X"])."""
    found: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL):
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.Import):
                found += [(alias.name, []) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.append((node.module, [alias.name for alias in node.names]))
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "omniagent":
                found.append(("omniagent", [node.attr]))
    return found


def test_the_readme_example_imports_only_public_names() -> None:
    """The README's example is what apps copy: it reaches omniagent only through `omniagent` and `omniagent.events`."""
    imports = _readme_python_imports()
    assert ("omniagent.events", ["TextDelta", "TurnEnded"]) in imports
    wrong = [
        f"{module}: {names}"
        for module, names in imports
        if module.split(".")[0] not in sys.stdlib_module_names
        and (module not in PUBLIC_MODULES or not set(names) <= set(PUBLIC_MODULES[module].__all__))
    ]
    assert wrong == []

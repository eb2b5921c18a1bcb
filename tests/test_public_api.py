"""The public surface is exactly `omniagent.__all__` and `omniagent.events.__all__` (house style: no export by
accident), and the README's Python example uses nothing else. A program importing only those two modules opens a
session of a real agent, prompts, answers a permission and two questions, and sets an option (issue 33)."""

import ast
import asyncio
import dataclasses
import json
import re
import subprocess
import sys
import typing
from functools import partial
from pathlib import Path

import msgspec
import pytest

import omniagent
import omniagent.events
from omniagent.events import (
    Completed,
    Event,
    PermissionAsk,
    QuestionAsk,
    RequestClosed,
    RequestOpened,
    SessionUpdated,
    TextDelta,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
)
from omniagent.protocols.sidecar import agents as wire_agents
from omniagent.protocols.sidecar import base as wire_base
from omniagent.protocols.sidecar import commands as wire_commands
from omniagent.protocols.sidecar import events as wire_events
from omniagent.runtime.runtime import Runtime
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests import public_api_program
from tests.public_api_program import Plan
from tests.runtime.adapters.engine.harness import bodies, use_engine, workspace

README = Path(__file__).resolve().parents[1] / "README.md"
PROGRAM = Path(public_api_program.__file__)
WAIT = 30.0  # seconds: the bound on a whole program run

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
    models = (wire_events, wire_agents, wire_base, wire_commands)
    assert [n for n in names if not any(getattr(omniagent.events, n) is getattr(m, n, None) for m in models)] == []


def test_a_program_passes_a_session_only_public_names() -> None:
    """What a program hands a `Session` (answers, option values, a rollback scope) and `Runtime.open` (the agent, the
    open options), and what it gets back (a `Delivery`), is public: every omniagent type reachable from those
    signatures, through unions, tagged unions' arms and the fields of models, is named by `omniagent` or
    `omniagent.events`."""
    public = {getattr(omniagent, n) for n in omniagent.__all__} | {
        getattr(omniagent.events, n) for n in omniagent.events.__all__
    }
    session = omniagent.Session
    methods = (session.prompt, session.answer, session.configure, session.rollback, session.cancel, session.dequeue)
    hints = [hint for method in methods for hint in typing.get_type_hints(method).values()]
    opened = typing.get_type_hints(Runtime.open)
    reached = _reachable([*hints, opened["agent"], opened["options"]])
    assert sorted(t.__qualname__ for t in reached - public) == []
    events = omniagent.events
    assert {
        events.PermissionAnswer,
        events.ChoicesAnswer,
        events.TextAnswer,
        events.Queued,
        events.McpServer,
    } <= reached


def _reachable(hints: list[object]) -> set[type]:
    """The omniagent classes a program meets through `hints`: their unions' members, a tagged union's arms, and the
    field types of each model or dataclass among them."""
    found: set[type] = set()
    pending = list(hints)
    while pending:
        hint = pending.pop()
        pending += typing.get_args(hint)
        # A tagged union's runtime type (`protocols/sidecar/base.py`: `tagged`) is made by ABCMeta, module `abc`.
        arms = getattr(hint, "arms", None)
        ours = isinstance(hint, type) and (hint.__module__.startswith("omniagent") or isinstance(arms, dict))
        if not ours or hint in found:
            continue
        found.add(hint)
        pending += (arms or {}).values()
        if issubclass(hint, msgspec.Struct) or dataclasses.is_dataclass(hint):
            pending += typing.get_type_hints(hint).values()
    return found


def _python_imports(source: str) -> list[tuple[str, list[str]]]:
    """(module, names) for each import of `source`, `import module` as (module, []), and each `omniagent.X` it uses
    as ("omniagent", ["X"])."""
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "omniagent":
            found.append(("omniagent", [node.attr]))
    return found


def _not_public(imports: list[tuple[str, list[str]]]) -> list[str]:
    """The imports that reach omniagent other than through its public names (the standard library is fine)."""
    return [
        f"{module}: {names}"
        for module, names in imports
        if module.split(".")[0] not in sys.stdlib_module_names
        and module != "__future__"
        and (module not in PUBLIC_MODULES or not set(names) <= set(PUBLIC_MODULES[module].__all__))
    ]


def _readme_python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL)


def test_the_readme_example_imports_only_public_names() -> None:
    """The README's example is what apps copy: it reaches omniagent only through `omniagent` and `omniagent.events`,
    and answers a permission with the public answer types."""
    imports = [found for block in _readme_python_blocks() for found in _python_imports(block)]
    events = {name for module, names in imports if module == "omniagent.events" for name in names}
    assert {
        "TextDelta",
        "TurnEnded",
        "RequestOpened",
        "PermissionAsk",
        "PermissionAnswer",
        "PermissionChoice",
    } <= events
    assert _not_public(imports) == []


def test_the_readme_example_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's example, run as written but against the bundled `turn` mock script (text, a permission request
    it waits on, more text) in place of qwen: it prints the turn's text and ends, so the permission was answered."""
    (block,) = _readme_python_blocks()
    assert '"qwen"' in block
    mock = partial(omniagent.Runtime, mock=omniagent.Runtime.load_mock("turn"))
    monkeypatch.setattr(omniagent, "Runtime", mock)  # the module's own attribute wins over its lazy lookup
    code = compile(block.replace('"qwen"', '"mock"'), str(README), "exec")
    exec(code, {"__name__": "readme_example"})
    printed = capsys.readouterr().out
    assert printed.startswith("Let me check. ") and printed.endswith("Done.")
    assert "cargo test" in printed  # what it asked to run, shown before the answer


def test_the_program_imports_only_public_names() -> None:
    """The end-to-end program below is written as an app would write it: `omniagent` and `omniagent.events` only."""
    imports = _python_imports(PROGRAM.read_text())
    assert {module for module, _ in imports} >= {"omniagent", "omniagent.events"}
    assert _not_public(imports) == []


def _ask(**arguments: object) -> Reply:
    return Reply(tool_calls=(FakeToolCall("ask_user", arguments),))


async def test_a_program_of_public_names_drives_our_engine_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33: the program opens a session of our engine (against the fake LLM), prompts, allows a write once,
    answers a select question by its label and an input question with text, sets the reasoning option, and prompts
    again. Seen from outside: the file is written, the model was told both answers, the option reached the next
    model request, and the session streamed each request opened and closed, the tool completed and both turns'
    text."""
    ws = workspace(tmp_path)
    scenario = Scenario(
        [
            Reply(tool_calls=(FakeToolCall("write", {"path": "hello.txt", "content": "hello\n"}),)),
            _ask(kind="select", question="Which branch?", options=["main", "dev"]),
            _ask(kind="input", question="Release name?"),
            Reply(text="All done."),
            Reply(text="Thought harder."),
        ]
    )
    plan = Plan(
        agent="omniagent",
        directory=str(ws),
        first="write hello.txt, then ask me",
        second="once more",
        replies={"Which branch?": "dev", "Release name?": "kumquat"},
        option="reasoning",
        value="high",
    )
    async with FakeLLMServer(scenario) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with asyncio.timeout(WAIT):
            seen = await public_api_program.run(plan)
        sent = await bodies(llm, 5)
    assert (ws / "hello.txt").read_text() == "hello\n"
    opened = [e.kind.request for e in seen if isinstance(e.kind, RequestOpened)]
    assert [type(request) for request in opened] == [PermissionAsk, QuestionAsk, QuestionAsk]
    closed = [e.kind.request_id for e in seen if isinstance(e.kind, RequestClosed)]
    assert closed == [request.request.id for request in opened]
    writes = [
        e.kind.tool for e in seen if isinstance(e.kind, ToolUpdated) and e.kind.tool.id == opened[0].request.tool.id
    ]
    assert writes[-1].status is ToolStatus.COMPLETED
    told = [json.dumps(body["messages"][-1]) for body in sent]  # what each request carried last
    assert "The user chose: dev" in told[2] and "The user answered: kumquat" in told[3]
    updated = [e.kind.info for e in seen if isinstance(e.kind, SessionUpdated)]
    assert updated[-1].configuration.options["reasoning"] == "high"
    assert sent[4]["thinking"]["budget_tokens"] > sent[3]["thinking"]["budget_tokens"]  # from medium to high
    ends = [e.kind.stop for e in seen if isinstance(e.kind, TurnEnded)]
    assert ends == [Completed(), Completed()]
    assert _text(seen) == "All done.Thought harder."
    assert [e.sequence for e in seen] == list(range(seen[0].sequence, seen[0].sequence + len(seen)))


def _text(events: list[Event]) -> str:
    return "".join(e.kind.text for e in events if isinstance(e.kind, TextDelta))

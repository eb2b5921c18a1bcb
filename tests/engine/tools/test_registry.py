"""The seam the run loop calls: registry, specs for the model, JSON argument decoding, context, diff views."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]
import pytest

from omniagent.engine.providers.neutral import ToolSpec
from omniagent.engine.tools import Tool, ToolContext, ToolRegistry, default_tools
from omniagent.engine.tools.views import diff_hunks, diff_view

from .conftest import make_ctx


def test_default_tools_are_the_built_ins_in_order() -> None:
    """Task brief: read, write, edit, exec and a file search; issue 13: fetch and plan; issue 12: ask_user."""
    registry = default_tools()
    assert [tool.name for tool in registry] == ["read", "write", "edit", "exec", "search", "fetch", "plan", "ask_user"]
    assert all(isinstance(tool, Tool) for tool in registry)
    assert registry.get("edit") is not None
    assert registry.get("nope") is None


def test_specs_carry_valid_object_schemas_whose_required_fields_exist() -> None:
    """Providers send `input_schema` as JSON Schema; a broken schema would be refused by the provider."""
    specs = default_tools().specs()
    assert all(isinstance(spec, ToolSpec) for spec in specs)
    for spec in specs:
        jsonschema.Draft202012Validator.check_schema(spec.input_schema)
        assert spec.input_schema["type"] == "object"
        properties = spec.input_schema["properties"]
        assert isinstance(properties, dict)
        required = spec.input_schema.get("required", [])
        assert isinstance(required, list)
        assert set(required) <= set(properties), spec.name
        assert spec.description


async def test_unknown_tool_is_an_error_result_listing_the_known_tools(workspace: Path) -> None:
    """Our choice: a model calling a tool that does not exist learns which ones do."""
    result = await default_tools().run("rm_rf", {}, make_ctx(workspace))
    assert result.is_error
    assert "read, write, edit, exec, search" in result.output


async def test_raw_json_arguments_are_decoded_and_bad_json_is_an_error_result(workspace: Path) -> None:
    """neutral.py: tool-call arguments arrive as raw JSON text, `""` meaning `{}`."""
    (workspace / "f.txt").write_text("x\n")
    registry = default_tools()
    ctx = make_ctx(workspace)
    assert not (await registry.run_json("read", '{"path": "f.txt"}', ctx)).is_error
    for raw in ('{"path": ', "[1, 2]", '"f.txt"', ""):
        result = await registry.run_json("read", raw, ctx)
        assert result.is_error, raw


def test_registry_refuses_two_tools_with_one_name() -> None:
    """Our choice: a name picks exactly one tool."""
    first = default_tools().get("read")
    assert first is not None
    with pytest.raises(ValueError):
        ToolRegistry([first, first])


def test_context_root_is_canonical_and_must_be_a_directory(tmp_path: Path) -> None:
    """Task brief: the workspace root is a canonical Path, so confinement compares like with like."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real, target_is_directory=True)
    assert ToolContext.for_workspace(tmp_path / "alias" / ".." / "alias").root == real.resolve()
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError):
        ToolContext.for_workspace(tmp_path / "file")
    with pytest.raises(FileNotFoundError):
        ToolContext.for_workspace(tmp_path / "missing")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb\nc\n", "a\nB\nc\n"),
        ("", "one\ntwo\n"),
        ("one\ntwo\n", ""),
        ("".join(f"{n}\n" for n in range(40)), "".join(f"{n}\n" for n in range(40) if n not in (3, 30)) + "end\n"),
    ],
)
def test_diff_hunks_match_difflib_unified_diff(old: str, new: str) -> None:
    """yuke DiffHunk is a unified-diff hunk: starts, counts and prefixed lines agree with `diff -u` (difflib)."""
    expected: list[tuple[int, int, int, int, list[str]]] = []
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3):
        if line.startswith(("---", "+++")):
            continue
        if header := re.fullmatch(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", line):
            a, b, c, d = header.groups()
            expected.append((int(a), int(b or 1), int(c), int(d or 1), []))
        else:
            expected[-1][4].append(line)
    got = [(h.old_start, h.old_lines, h.new_start, h.new_lines, list(h.lines)) for h in diff_hunks(old, new)]
    assert got == expected


def test_diff_view_is_absent_for_equal_texts() -> None:
    """yuke: views are optional; there is nothing to show for an unchanged file."""
    assert diff_view("f", "same\n", "same\n") is None
    view = diff_view("f", "a\n", "b\n")
    assert view is not None
    assert view.TYPE == "diff"

"""The search tool: files by glob, lines by regex, bounded, never inside .git."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniagent.engine.tools import default_tools
from omniagent.engine.tools.files.search import glob_regex

from .conftest import make_ctx


@pytest.fixture
def project(workspace: Path) -> Path:
    """A small tree with sources, tests, a binary and a .git directory."""
    for rel, text in {
        "README.md": "hello world\n",
        "src/app.py": "import os\nTODO = 'fix'\n",
        "src/util/helpers.py": "def helper():\n    return 'todo later'\n",
        "src/web/view.tsx": "export const x = 1\n",
        "tests/test_app.py": "def test_app():\n    pass\n",
        ".git/config": "TODO inside git\n",
        ".git/objects/ab.py": "TODO\n",
    }.items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (workspace / "logo.bin").write_bytes(b"TODO\x00\x01")
    return workspace


async def test_glob_without_slash_matches_file_names_at_any_depth_and_skips_git(project: Path) -> None:
    """Our choice (search.py docstring): fd-style name matching; .git is never entered."""
    result = await default_tools().run("search", {"glob": "*.py"}, make_ctx(project))
    assert result.output.splitlines() == ["src/app.py", "src/util/helpers.py", "tests/test_app.py"]


async def test_glob_with_slash_matches_paths_and_braces_pick_alternatives(project: Path) -> None:
    """Our choice: `**` crosses directories, `{a,b}` is an alternative."""
    result = await default_tools().run("search", {"glob": "src/**/*.{py,tsx}"}, make_ctx(project))
    assert result.output.splitlines() == ["src/app.py", "src/util/helpers.py", "src/web/view.tsx"]


async def test_regex_returns_path_line_and_text_skipping_binaries_and_git(project: Path) -> None:
    """Our choice: grep-style `path:line: text`; binary files and .git are skipped."""
    result = await default_tools().run("search", {"regex": "todo", "ignore_case": True}, make_ctx(project))
    assert result.output.splitlines() == [
        "src/app.py:2: TODO = 'fix'",
        "src/util/helpers.py:2:     return 'todo later'",
    ]


async def test_glob_and_regex_combine_within_a_directory(project: Path) -> None:
    """Our choice: `path` narrows the walk, `glob` the files, `regex` the lines."""
    result = await default_tools().run(
        "search", {"path": "src", "glob": "app.py", "regex": "^import"}, make_ctx(project)
    )
    assert result.output == "src/app.py:1: import os"


async def test_results_stop_at_the_cap_with_a_notice(project: Path) -> None:
    """Task brief: bounded results; the model is told the list is cut."""
    result = await default_tools().run("search", {"max_results": 2}, make_ctx(project))
    lines = result.output.splitlines()
    assert lines[:2] == ["README.md", "logo.bin"]
    assert lines[2] == "[stopped at 2 files; narrow the search to see more]"
    assert len(lines) == 3


async def test_no_match_is_a_plain_success(project: Path) -> None:
    """Our choice: finding nothing is an answer, not an error."""
    result = await default_tools().run("search", {"regex": "no such text anywhere"}, make_ctx(project))
    assert not result.is_error
    assert result.output == "no matching lines found"


async def test_invalid_regex_and_file_as_search_root_are_error_results(project: Path) -> None:
    """Task brief: bad arguments are error results."""
    ctx = make_ctx(project)
    assert (await default_tools().run("search", {"regex": "("}, ctx)).is_error
    assert (await default_tools().run("search", {"path": "README.md"}, ctx)).is_error
    assert (await default_tools().run("search", {"max_results": 0}, ctx)).is_error


def test_glob_translation_keeps_single_stars_inside_one_segment() -> None:
    """Our choice: `*` and `?` never cross `/`; `**/` may match zero directories; `[!x]` negates."""
    assert glob_regex("src/*.py").fullmatch("src/a.py")
    assert not glob_regex("src/*.py").fullmatch("src/sub/a.py")
    assert glob_regex("src/**/a.py").fullmatch("src/a.py")
    assert glob_regex("src/**/a.py").fullmatch("src/x/y/a.py")
    assert glob_regex("file?.txt").fullmatch("file1.txt")
    assert not glob_regex("file?.txt").fullmatch("file/.txt")
    assert glob_regex("[!a]b.c").fullmatch("xb.c")
    assert not glob_regex("[!a]b.c").fullmatch("ab.c")
    assert glob_regex("a+b(1).txt").fullmatch("a+b(1).txt")

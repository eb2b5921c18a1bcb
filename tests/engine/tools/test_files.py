"""The file tools: read windows, write with diff views, exact-string edit."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

from omniagent.engine.tools import DiffView, TextView, default_tools

from .conftest import WAIT_LIMIT, listing, make_ctx

# ---------------------------------------------------------------------------------------------------------------------
# read


async def test_read_returns_numbered_lines_and_a_text_view(workspace: Path) -> None:
    """Our choice (read.py docstring): `cat -n` style numbering; the view holds the raw text."""
    (workspace / "m.py").write_text("a = 1\nb = 2\n")
    result = await default_tools().run("read", {"path": "m.py"}, make_ctx(workspace))
    assert not result.is_error
    assert result.output == "     1\ta = 1\n     2\tb = 2"
    assert result.views == (TextView(text="a = 1\nb = 2", language="python"),)


async def test_read_window_ends_with_the_offset_to_continue_from(workspace: Path) -> None:
    """Our choice: a partial window names the next offset."""
    (workspace / "f.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    result = await default_tools().run("read", {"path": "f.txt", "offset": 3, "limit": 2}, make_ctx(workspace))
    assert result.output.splitlines() == [
        "     3\tline 3",
        "     4\tline 4",
        "[more lines follow; read again with offset=5]",
    ]


async def test_read_stops_at_the_byte_cap(workspace: Path) -> None:
    """Our choice: `read_max_bytes` bounds one window even when `limit` allows more."""
    (workspace / "f.txt").write_text("x" * 99 + "\n" + "y" * 99 + "\n" + "z\n")
    result = await default_tools().run("read", {"path": "f.txt"}, make_ctx(workspace, read_max_bytes=150))
    assert result.output.splitlines()[-1] == "[more lines follow; read again with offset=2]"


async def test_read_cuts_very_long_lines(workspace: Path) -> None:
    """Our choice: one minified line cannot flood the context."""
    (workspace / "min.js").write_text("q" * 50 + "\n")
    result = await default_tools().run("read", {"path": "min.js"}, make_ctx(workspace, max_line_chars=10))
    assert result.output == "     1\t" + "q" * 10 + " [line cut: 50 characters]"


async def test_read_refuses_offset_past_the_end(workspace: Path) -> None:
    """Our choice: an offset past the end is an error, not an empty success."""
    (workspace / "f.txt").write_text("one\n")
    result = await default_tools().run("read", {"path": "f.txt", "offset": 5}, make_ctx(workspace))
    assert result.is_error


async def test_read_of_empty_file_says_so(workspace: Path) -> None:
    """Our choice: an empty file is a success with a plain statement."""
    (workspace / "e.txt").write_text("")
    result = await default_tools().run("read", {"path": "e.txt"}, make_ctx(workspace))
    assert not result.is_error
    assert result.output == "e.txt is empty"


async def test_read_refuses_binary_files_directories_and_missing_files(workspace: Path) -> None:
    """Our choice: each is an error result, never an exception."""
    (workspace / "b.bin").write_bytes(b"\x89PNG\x00\x01")
    (workspace / "dir").mkdir()
    ctx = make_ctx(workspace)
    for path in ("b.bin", "dir", "missing.txt"):
        result = await default_tools().run("read", {"path": path}, ctx)
        assert result.is_error, path
        assert path in result.output


async def test_read_with_malformed_arguments_gives_error_results(workspace: Path) -> None:
    """Task brief: invalid arguments are an error result with a clear sentence, never an exception."""
    (workspace / "f.txt").write_text("x\n")
    ctx = make_ctx(workspace)
    for args in ({}, {"path": 3}, {"path": "f.txt", "limit": "ten"}, {"path": "f.txt", "offset": 0}, {"path": ""}):
        result = await default_tools().run("read", args, ctx)
        assert result.is_error, args
        assert result.output


# ---------------------------------------------------------------------------------------------------------------------
# write


async def test_write_creates_parent_directories_and_shows_an_all_added_diff(workspace: Path) -> None:
    """Task brief: write creates missing parents inside the workspace; the view is a diff."""
    result = await default_tools().run("write", {"path": "a/b/c.txt", "content": "x\ny\n"}, make_ctx(workspace))
    assert not result.is_error
    assert (workspace / "a" / "b" / "c.txt").read_text() == "x\ny\n"
    (view,) = result.views
    assert isinstance(view, DiffView)
    (file,) = view.files
    assert file.path == "a/b/c.txt"
    (hunk,) = file.hunks
    assert (hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines) == (0, 0, 1, 2)
    assert hunk.lines == ("+x", "+y")


async def test_write_overwrites_keeping_the_file_mode_and_leaves_no_temp_file(workspace: Path) -> None:
    """Our choice: overwrite is atomic (temp file + rename) and keeps permission bits."""
    target = workspace / "run.sh"
    target.write_text("echo old\n")
    target.chmod(0o755)
    result = await default_tools().run("write", {"path": "run.sh", "content": "echo new\n"}, make_ctx(workspace))
    assert not result.is_error
    assert target.read_text() == "echo new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert listing(workspace) == ["run.sh"]
    (view,) = result.views
    assert isinstance(view, DiffView)
    assert view.files[0].hunks[0].lines == ("-echo old", "+echo new")


async def test_write_of_identical_content_has_no_view(workspace: Path) -> None:
    """yuke: views are optional hints; an unchanged file has no diff to show."""
    (workspace / "f.txt").write_text("same\n")
    result = await default_tools().run("write", {"path": "f.txt", "content": "same\n"}, make_ctx(workspace))
    assert not result.is_error
    assert result.views == ()


async def test_write_refuses_a_directory_target_and_a_missing_content(workspace: Path) -> None:
    """Our choice: both are error results and the tree is unchanged."""
    (workspace / "d").mkdir()
    ctx = make_ctx(workspace)
    assert (await default_tools().run("write", {"path": "d", "content": "x"}, ctx)).is_error
    assert (await default_tools().run("write", {"path": "n.txt"}, ctx)).is_error
    assert listing(workspace) == ["d"]


# ---------------------------------------------------------------------------------------------------------------------
# edit


async def test_edit_replaces_a_unique_string_and_shows_the_diff(workspace: Path) -> None:
    """Task brief: exact replacement of a string that occurs once; diff view."""
    (workspace / "f.py").write_text("a = 1\nb = 2\nc = 3\n")
    args = {"path": "f.py", "old_string": "b = 2", "new_string": "b = 20"}
    result = await default_tools().run("edit", args, make_ctx(workspace))
    assert not result.is_error
    assert (workspace / "f.py").read_text() == "a = 1\nb = 20\nc = 3\n"
    (view,) = result.views
    assert isinstance(view, DiffView)
    assert view.files[0].hunks[0].lines == (" a = 1", "-b = 2", "+b = 20", " c = 3")


async def test_edit_with_no_match_fails_and_leaves_the_file_unchanged(workspace: Path) -> None:
    """Task brief: zero matches is a clear error."""
    (workspace / "f.txt").write_text("hello\n")
    args = {"path": "f.txt", "old_string": "absent", "new_string": "x"}
    result = await default_tools().run("edit", args, make_ctx(workspace))
    assert result.is_error
    assert (workspace / "f.txt").read_text() == "hello\n"


async def test_edit_with_two_matches_fails_naming_the_count_unless_replace_all(workspace: Path) -> None:
    """Task brief: more than one match is an error unless replace_all is set."""
    (workspace / "f.txt").write_text("x = 1\nx = 1\n")
    ctx = make_ctx(workspace)
    args: dict[str, object] = {"path": "f.txt", "old_string": "x = 1", "new_string": "y = 2"}
    ambiguous = await default_tools().run("edit", args, ctx)
    assert ambiguous.is_error
    assert "2 times" in ambiguous.output
    assert (workspace / "f.txt").read_text() == "x = 1\nx = 1\n"
    every = await default_tools().run("edit", {**args, "replace_all": True}, ctx)
    assert not every.is_error
    assert every.output == "replaced 2 occurrences in f.txt"
    assert (workspace / "f.txt").read_text() == "y = 2\ny = 2\n"


async def test_edit_keeps_crlf_line_endings(workspace: Path) -> None:
    """Our choice: files are edited as bytes-exact UTF-8 text; line terminators are not normalised."""
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    args = {"path": "w.txt", "old_string": "two", "new_string": "2"}
    assert not (await default_tools().run("edit", args, make_ctx(workspace))).is_error
    assert (workspace / "w.txt").read_bytes() == b"one\r\n2\r\n"


async def test_edit_refuses_missing_files_non_utf8_files_and_no_op_edits(workspace: Path) -> None:
    """Our choice: each is an error result; nothing on disk changes."""
    (workspace / "latin.txt").write_bytes(b"caf\xe9\n")
    (workspace / "f.txt").write_text("abc\n")
    ctx = make_ctx(workspace)
    cases: list[dict[str, object]] = [
        {"path": "missing.txt", "old_string": "a", "new_string": "b"},
        {"path": "latin.txt", "old_string": "caf", "new_string": "tea"},
        {"path": "f.txt", "old_string": "abc", "new_string": "abc"},
        {"path": "f.txt", "old_string": "", "new_string": "b"},
        {"path": "f.txt", "old_string": "abc", "new_string": "b", "replace_all": "yes"},
    ]
    for args in cases:
        assert (await default_tools().run("edit", args, ctx)).is_error, args
    assert (workspace / "latin.txt").read_bytes() == b"caf\xe9\n"
    assert (workspace / "f.txt").read_text() == "abc\n"
    assert not (workspace / "missing.txt").exists()


async def test_file_tools_refuse_a_fifo_instead_of_blocking_on_it(workspace: Path) -> None:
    """Our choice: opening a FIFO with no writer blocks forever, so only regular files are opened."""
    os.mkfifo(workspace / "pipe")
    ctx = make_ctx(workspace)
    calls: list[tuple[str, dict[str, object]]] = [
        ("read", {"path": "pipe"}),
        ("edit", {"path": "pipe", "old_string": "a", "new_string": "b"}),
        ("write", {"path": "pipe", "content": "x"}),
    ]
    for name, args in calls:
        result = await asyncio.wait_for(default_tools().run(name, args, ctx), WAIT_LIMIT)
        assert result.is_error, name
    assert stat.S_ISFIFO(os.stat(workspace / "pipe").st_mode)


async def test_text_with_a_lone_surrogate_is_refused_before_touching_disk(workspace: Path) -> None:
    """Our choice: JSON can carry "\\ud800", which has no UTF-8 form; the model gets an error, not a crash."""
    ctx = make_ctx(workspace)
    (workspace / "f.txt").write_text("abc\n")
    write = await default_tools().run("write", {"path": "new.txt", "content": "bad \ud800"}, ctx)
    edit = await default_tools().run("edit", {"path": "f.txt", "old_string": "abc", "new_string": "\udfff"}, ctx)
    assert write.is_error and edit.is_error
    assert listing(workspace) == ["f.txt"]
    assert (workspace / "f.txt").read_text() == "abc\n"

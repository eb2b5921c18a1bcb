"""Workspace confinement: no tool reads, writes or lists anything outside the workspace root."""

from __future__ import annotations

import os
from pathlib import Path

from omniagent.engine.tools import default_tools
from omniagent.engine.tools.files.workspace import resolve_in_workspace

from .conftest import make_ctx, tree


async def test_write_with_dotdot_escape_is_refused_and_writes_nothing_outside(workspace: Path, outside: Path) -> None:
    """Our rule (task brief): `..` never leaves the workspace."""
    before = tree(outside.parent)
    result = await default_tools().run("write", {"path": "../outside/new.txt", "content": "x"}, make_ctx(workspace))
    assert result.is_error
    assert tree(outside.parent) == before


async def test_read_of_absolute_path_outside_workspace_is_refused(workspace: Path, outside: Path) -> None:
    """Our rule: an absolute path is accepted only when it lies inside the workspace."""
    result = await default_tools().run("read", {"path": str(outside / "secret.txt")}, make_ctx(workspace))
    assert result.is_error
    assert "secret" not in result.output.replace("secret.txt", "")


async def test_absolute_path_inside_workspace_is_accepted(workspace: Path) -> None:
    """Our rule: absolute paths are fine when inside; the view path is shown relative to the root."""
    result = await default_tools().run(
        "write", {"path": str(workspace / "sub" / "a.txt"), "content": "hi\n"}, make_ctx(workspace)
    )
    assert not result.is_error
    assert (workspace / "sub" / "a.txt").read_text() == "hi\n"


async def test_write_through_symlinked_directory_pointing_outside_is_refused(workspace: Path, outside: Path) -> None:
    """Our rule: symlinks are resolved before the check, so a link to an outside directory is no way out."""
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    result = await default_tools().run("write", {"path": "link/planted.txt", "content": "x"}, make_ctx(workspace))
    assert result.is_error
    assert tree(outside) == before


async def test_write_through_dangling_symlink_pointing_outside_is_refused(workspace: Path, outside: Path) -> None:
    """Our rule: a dangling link is followed too, so writing it cannot create a file outside."""
    (workspace / "dangling").symlink_to(outside / "created.txt")
    result = await default_tools().run("write", {"path": "dangling", "content": "x"}, make_ctx(workspace))
    assert result.is_error
    assert not (outside / "created.txt").exists()


async def test_read_and_edit_of_symlinked_file_pointing_outside_are_refused(workspace: Path, outside: Path) -> None:
    """Our rule: a file link to outside cannot be read or edited."""
    (workspace / "s.txt").symlink_to(outside / "secret.txt")
    ctx = make_ctx(workspace)
    read = await default_tools().run("read", {"path": "s.txt"}, ctx)
    edit = await default_tools().run("edit", {"path": "s.txt", "old_string": "secret", "new_string": "pwned"}, ctx)
    assert read.is_error and edit.is_error
    assert (outside / "secret.txt").read_text() == "secret\n"


async def test_symlink_staying_inside_workspace_is_followed(workspace: Path) -> None:
    """Our rule: links are fine when their target is inside."""
    (workspace / "real.txt").write_text("inside\n")
    (workspace / "alias.txt").symlink_to(workspace / "real.txt")
    result = await default_tools().run("read", {"path": "alias.txt"}, make_ctx(workspace))
    assert not result.is_error
    assert "inside" in result.output


async def test_search_does_not_read_content_of_files_linked_from_outside(workspace: Path, outside: Path) -> None:
    """Our rule: content search skips file links whose target is outside the workspace."""
    (workspace / "s.txt").symlink_to(outside / "secret.txt")
    (workspace / "d").symlink_to(outside, target_is_directory=True)
    result = await default_tools().run("search", {"regex": "secret"}, make_ctx(workspace))
    assert result.output == "no matching lines found"


async def test_search_path_outside_workspace_is_refused(workspace: Path, outside: Path) -> None:
    """Our rule: the search root is confined like any other path."""
    result = await default_tools().run("search", {"path": "../outside"}, make_ctx(workspace))
    assert result.is_error


async def test_symlink_loop_gives_an_error_result(workspace: Path) -> None:
    """Our rule: resolution failures are error results the model reads, never exceptions."""
    os.symlink("loop_b", workspace / "loop_a")
    os.symlink("loop_a", workspace / "loop_b")
    ctx = make_ctx(workspace)
    read = await default_tools().run("read", {"path": "loop_a"}, ctx)
    write = await default_tools().run("write", {"path": "loop_a", "content": "x"}, ctx)
    assert read.is_error and write.is_error


def test_resolution_returns_the_canonical_path_inside(workspace: Path) -> None:
    """Our rule: one function owns confinement and hands back the canonical path."""
    (workspace / "d").mkdir()
    assert resolve_in_workspace(workspace, "d/../d/./f.txt") == workspace / "d" / "f.txt"
    assert resolve_in_workspace(workspace, ".") == workspace


async def test_writing_a_link_to_an_inside_file_writes_that_file_and_keeps_the_link(workspace: Path) -> None:
    """Our rule (issue 9 part 2): links are resolved inside the walk; the write lands on the target, by rename."""
    (workspace / "real.txt").write_text("old\n")
    (workspace / "alias.txt").symlink_to("real.txt")
    result = await default_tools().run("write", {"path": "alias.txt", "content": "new\n"}, make_ctx(workspace))
    assert result.output == "overwrote real.txt (4 bytes)"
    assert (workspace / "alias.txt").is_symlink()
    assert (workspace / "real.txt").read_text() == "new\n"


async def test_an_absolute_path_through_a_link_to_the_workspace_is_accepted(workspace: Path, tmp_path: Path) -> None:
    """Our rule: an absolute path written through another name of the workspace (a linked home, macOS's
    /private/tmp) is walked from the workspace's fd like a relative one."""
    (tmp_path / "alias").symlink_to(workspace, target_is_directory=True)
    (workspace / "f.txt").write_text("via alias\n")
    result = await default_tools().run("read", {"path": str(tmp_path / "alias" / "f.txt")}, make_ctx(workspace))
    assert result.output == "     1\tvia alias"


async def test_a_relative_link_that_climbs_out_and_back_in_is_refused(workspace: Path) -> None:
    """Our rule: a link's target may not leave the workspace even on the way (`../ws/f.txt`): the walk never
    stands outside the root, so there is no outside directory a swap could redirect."""
    (workspace / "f.txt").write_text("x\n")
    (workspace / "detour").symlink_to(Path("..") / workspace.name / "f.txt")
    result = await default_tools().run("read", {"path": "detour"}, make_ctx(workspace))
    assert result.is_error
    assert "is outside the workspace (through the symlink detour)" in result.output

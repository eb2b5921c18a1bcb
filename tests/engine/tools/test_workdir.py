"""A workspace seen at a workdir (a workspace view, e.g. `/app`): the file tools take paths under it as the
workspace's, and `exec` runs there, unsandboxed too; paths outside stay refused, and nothing is made on the host."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from omniagent.engine.tools import default_tools
from omniagent.sandbox import SandboxPolicy

from .conftest import make_ctx

APP = Path("/app")
AT_APP = SandboxPolicy(mode="unsandboxed", workdir=APP)


def _absent(path: Path) -> bool:
    return not os.path.lexists(path)


async def test_the_file_tools_take_a_path_under_the_workdir_as_the_workspaces(workspace: Path) -> None:
    """write, read, edit and search on /app/… act on the workspace's files and answer with workspace paths; a link
    whose target is under /app is followed inside; relative paths work as before."""
    tools, ctx = default_tools(), make_ctx(workspace, sandbox=AT_APP)
    written = await tools.run("write", {"path": "/app/sub/a.txt", "content": "one\n"}, ctx)
    assert (written.is_error, written.output) == (False, "created sub/a.txt (4 bytes)")
    assert (workspace / "sub" / "a.txt").read_text() == "one\n"
    edited = await tools.run("edit", {"path": "/app/sub/a.txt", "old_string": "one", "new_string": "two"}, ctx)
    assert (edited.is_error, edited.output) == (False, "replaced 1 occurrence in sub/a.txt")
    read = await tools.run("read", {"path": "/app/sub/a.txt"}, ctx)
    assert (read.is_error, read.output) == (False, "     1\ttwo")
    found = await tools.run("search", {"path": "/app/sub", "regex": "tw"}, ctx)
    assert (found.is_error, found.output) == (False, "sub/a.txt:1: two")
    (workspace / "link.txt").symlink_to("/app/sub/a.txt")
    through = await tools.run("read", {"path": "link.txt"}, ctx)
    assert (through.is_error, through.output) == (False, "     1\ttwo")
    relative = await tools.run("read", {"path": "sub/a.txt"}, ctx)
    assert relative.output == "     1\ttwo"


async def test_paths_outside_the_workdir_stay_refused_in_its_name(workspace: Path, outside: Path) -> None:
    """An absolute path elsewhere, a `..` out of /app and a link leading out are refused, the sentence naming /app
    (the path the model knows), and nothing outside is read or written."""
    tools, ctx = default_tools(), make_ctx(workspace, sandbox=AT_APP)
    (workspace / "out.txt").symlink_to("/app/../" + str(outside / "secret.txt").lstrip("/"))
    for path in (str(outside / "secret.txt"), f"/app/../{str(outside).lstrip('/')}/secret.txt", "out.txt"):
        result = await tools.run("read", {"path": path}, ctx)
        assert result.is_error, path
        assert "outside the workspace" in result.output and "only paths inside /app may be used" in result.output
    wrote = await tools.run("write", {"path": str(outside / "new.txt"), "content": "x"}, ctx)
    assert wrote.is_error and _absent(outside / "new.txt")


async def test_an_unsandboxed_command_runs_at_the_workdir_in_a_view_of_this_machine(
    workspace: Path, outside: Path
) -> None:
    """Unsandboxed, as the user: the command starts at the workdir, writes there land in the workspace, and the
    rest of the machine is as it is (a file outside is written where it is); the workdir is not made on the host."""
    workdir = Path(f"/omniagent-view-{secrets.token_hex(4)}")
    ctx = make_ctx(workspace, sandbox=SandboxPolicy(mode="unsandboxed", workdir=workdir))
    (workspace / "a.txt").write_text("in the workspace\n")
    command = f"pwd; cat a.txt; echo new > {workdir}/b.txt; echo here > {outside}/c.txt"
    result = await default_tools().run("exec", {"command": command}, ctx)
    assert not result.is_error, result.output
    assert result.output.splitlines()[:2] == [str(workdir), "in the workspace"]
    assert (workspace / "b.txt").read_text() == "new\n"
    assert (outside / "c.txt").read_text() == "here\n"
    assert _absent(workdir)

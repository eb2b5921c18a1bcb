"""Project instructions read from files (docs/engine.md, "Project instructions"): which files, in which order, and
what a strange file gives. The end-to-end order and limits through `omniagent rpc` are in
tests/e2e/test_rpc_instructions.py."""

from __future__ import annotations

from pathlib import Path

from omniagent.engine.run.instructions import HEADING, ProjectInstructions, compose


def test_outside_a_repository_only_the_workspace_counts(tmp_path: Path) -> None:
    workspace = tmp_path / "a" / "ws"
    workspace.mkdir(parents=True)
    (tmp_path / "a" / "AGENTS.md").write_text("parent\n")
    (workspace / "AGENTS.md").write_text("workspace\n")
    assert ProjectInstructions().files(str(workspace)) == [workspace / "AGENTS.md"]


def test_empty_files_are_skipped_and_bytes_that_are_not_utf8_replaced(tmp_path: Path) -> None:
    user, workspace = tmp_path / "user", tmp_path / "ws"
    user.mkdir()
    workspace.mkdir()
    (user / "AGENTS.md").write_text("  \n")
    (workspace / "AGENTS.md").write_bytes(b"caf\xe9\n")
    section = ProjectInstructions(user).section(str(workspace))
    assert section == f"{HEADING}\n\n## {workspace / 'AGENTS.md'}\n\ncaf\ufffd"
    assert compose("base", section) == f"base\n\n{section}" and compose("base", "") == "base"


def test_a_file_without_line_ends_is_cut_at_the_limit(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("y" * 50)
    section = ProjectInstructions(file_limit=10).section(str(tmp_path))
    assert section.endswith("yyyyyyyyyy\n\n[AGENTS.md cut here: the file is 50 bytes; only its first 10 are included]")

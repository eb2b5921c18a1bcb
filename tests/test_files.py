"""`omniagent.files.write_whole`: a file replaced whole, private from its first byte, never half-written."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from omniagent.files import write_whole


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_is_private_whatever_the_umask_and_holds_exactly_the_data(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        write_whole(tmp_path / "key.json", '{"key": "é"}')
    finally:
        os.umask(old)
    assert (tmp_path / "key.json").read_bytes() == '{"key": "é"}'.encode()
    assert _mode(tmp_path / "key.json") == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key.json"]


def test_a_replaced_file_takes_the_mode_asked_and_the_new_bytes(tmp_path: Path) -> None:
    target = tmp_path / "job.json"
    target.write_text("old and longer than the new one")
    target.chmod(0o600)
    write_whole(target, b"new", mode=0o644, durable=True)
    assert target.read_bytes() == b"new" and _mode(target) == 0o644


def test_a_link_planted_at_the_path_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    (tmp_path / "token").symlink_to(victim)
    write_whole(tmp_path / "token", "secret")
    assert victim.read_text() == "untouched"
    assert not (tmp_path / "token").is_symlink() and (tmp_path / "token").read_text() == "secret"


def test_a_write_that_cannot_land_leaves_nothing_beside_the_path(tmp_path: Path) -> None:
    (tmp_path / "a-folder").mkdir()
    with pytest.raises(IsADirectoryError):
        write_whole(tmp_path / "a-folder", "text")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-folder"]
    with pytest.raises(FileNotFoundError):
        write_whole(tmp_path / "missing" / "file", "text")

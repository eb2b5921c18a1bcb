"""session.rewind over a real `omniagent rpc` subprocess (docs/engine.md "Rewind"; issue 12 part 3): the transcript
is cut before a message with `transcript.truncated`, ids are never reused, a busy session is refused, and with
`restore_files` the files the engine's tools changed come back as they were at that message (a link standing at
such a path now is replaced or removed, never written through; issue 26)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply
from tests.e2e.rpc_sessions import new_session, send_text
from tests.engine.rpc_harness import RpcProcess

# Each test runs on both stores: SQLite, and a fresh PostgreSQL database (conftest.py `each_store`).
pytestmark = pytest.mark.usefixtures("each_store")


NEWEST = 2**53 - 1


async def _turn(rpc: RpcProcess, sid: str, text: str) -> int:
    return await rpc.broadcast("run.done", after=send_text(rpc, sid, text), within=15.0)


async def _ids(rpc: RpcProcess, sid: str) -> list[int]:
    history = await rpc.call("session.history", {"session_id": sid, "before_message_id": NEWEST})
    return [m["id"] for m in history["messages"]]


def _call(name: str, arguments: dict[str, Any]) -> Reply:
    return Reply(tool_calls=(FakeToolCall(name, arguments),))


async def test_a_file_written_at_3_and_edited_at_5_comes_back_as_it_was_before_5_then_before_3(
    rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path
) -> None:
    """Issue 12 acceptance: one turn writes notes.txt in message 3 and edits it in message 5. Rewinding before 5
    with files cuts the transcript to 1-4 and puts back the written text; before 3, the file is gone again. The
    messages after a rewind get new ids; the removed ones are unknown to a later rewind."""
    llm.enqueue(
        _call("search", {"glob": "*.txt"}),  # message 2
        _call("write", {"path": "notes.txt", "content": "first\n"}),  # message 3
        _call("read", {"path": "notes.txt"}),  # message 4
        _call("edit", {"path": "notes.txt", "old_string": "first", "new_string": "second"}),  # message 5
        Reply(text="Done."),  # message 6
        Reply(text="Again."),  # the turn after the first rewind: messages 7 and 8
    )
    sid, ws = await new_session(rpc, tmp_path)
    await _turn(rpc, sid, "write and edit notes")
    assert await _ids(rpc, sid) == [1, 2, 3, 4, 5, 6]
    assert (ws / "notes.txt").read_text() == "second\n"

    start = len(rpc.lines)
    assert await rpc.call("session.rewind", {"session_id": sid, "before_message_id": 5, "restore_files": True}) == {}
    assert rpc.names(start) == [
        "transcript.truncated",
        "session.summary_changed",
        "session.activity_changed",
        "response:session.rewind",
    ]
    truncated = rpc.lines[start]["params"]
    assert truncated["first_removed_id"] == 5 and truncated["session_id"] == sid
    summary = rpc.lines[start + 1]["params"]["session"]
    assert summary["message_count"] == 4 and summary["title"] == "write and edit notes"
    assert (ws / "notes.txt").read_text() == "first\n"
    assert await _ids(rpc, sid) == [1, 2, 3, 4]

    await _turn(rpc, sid, "again")
    assert await _ids(rpc, sid) == [1, 2, 3, 4, 7, 8]  # 5 and 6 are never given again
    sent = (await llm.wait_for_requests_async(6))[5].body
    assert isinstance(sent, dict) and "second" not in str(sent["messages"])  # the model no longer sees the edit
    code = await rpc.call_error("session.rewind", {"session_id": sid, "before_message_id": 5, "restore_files": True})
    assert code == ErrorCode.UNKNOWN_MESSAGE

    await rpc.call("session.rewind", {"session_id": sid, "before_message_id": 3, "restore_files": True})
    assert not (ws / "notes.txt").exists()
    assert await _ids(rpc, sid) == [1, 2]
    got = await rpc.call("session.get", {"session_id": sid})
    assert got["session"]["message_count"] == 2


async def test_without_restore_files_only_the_conversation_is_rewound(
    rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path
) -> None:
    """The default (a yuke client knows no `restore_files`): the transcript is cut, the workspace is untouched.
    The checkpoints stay, so a later rewind with files before an earlier message still restores."""
    llm.enqueue(_call("write", {"path": "a.txt", "content": "a\n"}), Reply(text="ok"), Reply(text="fine"))
    sid, ws = await new_session(rpc, tmp_path)
    await _turn(rpc, sid, "write a")
    await _turn(rpc, sid, "thanks")
    assert await _ids(rpc, sid) == [1, 2, 3, 4, 5]
    await rpc.call("session.rewind", {"session_id": sid, "before_message_id": 4})
    assert (ws / "a.txt").read_text() == "a\n"
    assert await _ids(rpc, sid) == [1, 2, 3]
    await rpc.call("session.rewind", {"session_id": sid, "before_message_id": 1, "restore_files": True})
    assert not (ws / "a.txt").exists()
    got = await rpc.call("session.get", {"session_id": sid})
    assert got["session"]["message_count"] == 0 and got["session"]["title"] == ""
    assert got["activity"]["context_usage"]["input"] == 0


async def test_a_busy_session_is_refused_and_unknown_ids_are_errors(
    rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path
) -> None:
    """A session whose run is open (here: waiting on a permission ask) answers session_busy and keeps every
    message and file; an unknown session or message is refused with its own code."""
    llm.enqueue(_call("write", {"path": "b.txt", "content": "b\n"}), Reply(text="ok"))
    sid, ws = await new_session(rpc, tmp_path, mode="ask")
    asked = await rpc.broadcast("interaction.requested", after=send_text(rpc, sid, "go"))
    code = await rpc.call_error("session.rewind", {"session_id": sid, "before_message_id": 1, "restore_files": True})
    assert code == ErrorCode.SESSION_BUSY
    assert not any(line.get("method") == "transcript.truncated" for line in rpc.lines)
    interaction = rpc.lines[asked]["params"]["interaction_id"]
    await rpc.call(
        "interaction.respond", {"interaction_id": interaction, "response": {"type": "confirm", "value": True}}
    )
    await rpc.broadcast("run.done", after=asked)
    assert (ws / "b.txt").read_text() == "b\n" and await _ids(rpc, sid) == [1, 2, 3]

    assert (
        await rpc.call_error("session.rewind", {"session_id": "f" * 32, "before_message_id": 1})
        == ErrorCode.UNKNOWN_SESSION
    )
    assert (
        await rpc.call_error("session.rewind", {"session_id": sid, "before_message_id": 99})
        == ErrorCode.UNKNOWN_MESSAGE
    )
    assert await rpc.call_error("session.rewind", {"session_id": sid}) == ErrorCode.BAD_REQUEST


async def test_a_file_that_cannot_be_put_back_rewinds_nothing(
    rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path
) -> None:
    """All or nothing: a.txt (message 2) is put back first, b.txt (message 3) cannot be (a directory stands there
    now), so a.txt is undone, the transcript is untouched and the answer is runtime_failed."""
    llm.enqueue(
        _call("write", {"path": "a.txt", "content": "a1\n"}),
        _call("write", {"path": "b.txt", "content": "b1\n"}),
        Reply(text="ok"),
    )
    sid, ws = await new_session(rpc, tmp_path)
    (ws / "a.txt").write_text("a0\n")
    await _turn(rpc, sid, "write both")
    (ws / "a.txt").write_text("changed by hand\n")
    (ws / "b.txt").unlink()
    (ws / "b.txt").mkdir()
    code = await rpc.call_error("session.rewind", {"session_id": sid, "before_message_id": 2, "restore_files": True})
    assert code == ErrorCode.RUNTIME_FAILED
    assert (ws / "a.txt").read_text() == "changed by hand\n" and (ws / "b.txt").is_dir()
    assert await _ids(rpc, sid) == [1, 2, 3, 4]
    (ws / "b.txt").rmdir()
    await rpc.call("session.rewind", {"session_id": sid, "before_message_id": 2, "restore_files": True})
    assert (ws / "a.txt").read_text() == "a0\n" and not (ws / "b.txt").exists()


async def test_a_link_the_model_wrote_through_stays_the_same_link_and_its_target_comes_back(
    rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path
) -> None:
    """The tools write through a link to a file inside the workspace (the link stays, the checkpoint is its
    target's), so a rewind puts the target's content back and leaves the link as it was, target text and all."""
    llm.enqueue(
        _call("write", {"path": "link.txt", "content": "new\n"}),
        _call("edit", {"path": "docs/link.md", "old_string": "old", "new_string": "newer"}),
        Reply(text="ok"),
    )
    sid, ws = await new_session(rpc, tmp_path)
    (ws / "real.txt").write_text("old\n")
    (ws / "docs").mkdir()
    (ws / "docs" / "real.md").write_text("old\n")
    os.symlink("real.txt", ws / "link.txt")
    os.symlink(ws / "docs" / "real.md", ws / "docs" / "link.md")
    await _turn(rpc, sid, "write through the links")
    assert (ws / "real.txt").read_text() == "new\n" and (ws / "docs" / "real.md").read_text() == "newer\n"
    assert await rpc.call("session.rewind", {"session_id": sid, "before_message_id": 2, "restore_files": True}) == {}
    assert os.readlink(ws / "link.txt") == "real.txt" and os.readlink(ws / "docs" / "link.md") == str(
        ws / "docs" / "real.md"
    )
    assert (ws / "real.txt").read_text() == "old\n" and (ws / "docs" / "real.md").read_text() == "old\n"


async def test_a_file_replaced_by_a_link_since_comes_back_as_the_file_and_nothing_is_written_through_the_link(
    rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path
) -> None:
    """After the turn, something outside the engine's tools (an `exec` command, the user) put links where the
    model's files were: a.txt to a file outside the workspace, b.txt to c.txt inside. The rewind replaces each
    link by the file the checkpoint holds; neither target is written."""
    llm.enqueue(
        _call("write", {"path": "a.txt", "content": "a1\n"}),
        _call("write", {"path": "b.txt", "content": "b1\n"}),
        Reply(text="ok"),
    )
    sid, ws = await new_session(rpc, tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("not the workspace's\n")
    (ws / "a.txt").write_text("a0\n")
    (ws / "b.txt").write_text("b0\n")
    (ws / "c.txt").write_text("c0\n")
    await _turn(rpc, sid, "write a and b")
    for name, target in (("a.txt", str(outside)), ("b.txt", "c.txt")):
        (ws / name).unlink()
        os.symlink(target, ws / name)
    assert await rpc.call("session.rewind", {"session_id": sid, "before_message_id": 2, "restore_files": True}) == {}
    for name, text in (("a.txt", "a0\n"), ("b.txt", "b0\n")):
        assert not (ws / name).is_symlink() and (ws / name).read_text() == text
    assert outside.read_text() == "not the workspace's\n" and (ws / "c.txt").read_text() == "c0\n"
    assert await _ids(rpc, sid) == [1]


async def test_a_link_made_where_the_model_created_a_file_is_removed_and_its_target_kept(
    rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path
) -> None:
    """The model created new.txt and far.txt (no file there before); links replaced them since, to keep.txt inside
    and to a file outside. Rewinding removes the links themselves, never what they point to."""
    llm.enqueue(
        _call("write", {"path": "new.txt", "content": "new\n"}),
        _call("write", {"path": "far.txt", "content": "far\n"}),
        Reply(text="ok"),
    )
    sid, ws = await new_session(rpc, tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("not the workspace's\n")
    (ws / "keep.txt").write_text("keep\n")
    await _turn(rpc, sid, "create two files")
    for name, target in (("new.txt", "keep.txt"), ("far.txt", str(outside))):
        (ws / name).unlink()
        os.symlink(target, ws / name)
    assert await rpc.call("session.rewind", {"session_id": sid, "before_message_id": 2, "restore_files": True}) == {}
    assert sorted(p.name for p in ws.iterdir()) == ["keep.txt"]  # neither link, nor a temp file, is left
    assert (ws / "keep.txt").read_text() == "keep\n" and outside.read_text() == "not the workspace's\n"


async def test_a_failed_rewind_puts_a_link_back_as_the_link_and_a_parent_linked_outside_stays_refused(
    rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path
) -> None:
    """a.txt (message 2) is now a link to a file outside: it is put back first, replacing the link. sub/c.txt
    (message 3) cannot be: its directory is now a link leading outside the workspace, which stays refused. So the
    rewind undoes a.txt, restoring the link itself (the same target text), and answers runtime_failed; nothing is
    written outside."""
    llm.enqueue(
        _call("write", {"path": "a.txt", "content": "a1\n"}),
        _call("write", {"path": "sub/c.txt", "content": "c1\n"}),
        Reply(text="ok"),
    )
    sid, ws = await new_session(rpc, tmp_path)
    outside, elsewhere = tmp_path / "outside.txt", tmp_path / "elsewhere"
    outside.write_text("not the workspace's\n")
    elsewhere.mkdir()
    (elsewhere / "c.txt").write_text("theirs\n")
    (ws / "a.txt").write_text("a0\n")
    await _turn(rpc, sid, "write a and sub/c")
    (ws / "a.txt").unlink()
    os.symlink(outside, ws / "a.txt")
    (ws / "sub" / "c.txt").unlink()
    (ws / "sub").rmdir()
    os.symlink(elsewhere, ws / "sub")
    code = await rpc.call_error("session.rewind", {"session_id": sid, "before_message_id": 2, "restore_files": True})
    assert code == ErrorCode.RUNTIME_FAILED
    assert os.readlink(ws / "a.txt") == str(outside) and os.readlink(ws / "sub") == str(elsewhere)
    assert outside.read_text() == "not the workspace's\n" and sorted(p.name for p in elsewhere.iterdir()) == ["c.txt"]
    assert (elsewhere / "c.txt").read_text() == "theirs\n"
    assert await _ids(rpc, sid) == [1, 2, 3, 4]

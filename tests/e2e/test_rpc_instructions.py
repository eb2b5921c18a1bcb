"""Project instructions over a real `omniagent rpc` subprocess (docs/engine.md, "Project instructions"): the
`AGENTS.md` files (`CLAUDE.md` where a directory has none) of the user, the repository root and each directory down
to the workspace join the system prompt the fake LLM receives, most general first, after the session's own prompt
(its `${…}` placeholders resolved); a file too long is cut, a file with no room left is named, a missing one is
skipped."""

from __future__ import annotations

from pathlib import Path

from omniagent.engine.run.conversation import DEFAULT_SYSTEM_PROMPT
from omniagent.engine.run.instructions import FILE_LIMIT, HEADING, TOTAL_LIMIT
from omniagent.testing import FakeLLMServer, Reply, Scenario
from tests.engine.rpc_harness import RpcProcess, write_providers
from tests.mcp_support import system_text


async def _system_prompts(
    data: Path, workspace: Path, llm: FakeLLMServer, *, edit: str | None = None, **create: str
) -> list[str]:
    """Run a turn in a new session of `workspace` (and with `edit`, write it to the workspace's AGENTS.md and run a
    second one); the system prompt of each request."""
    before = len(llm.requests)
    rpc = await RpcProcess.start(data)
    try:
        params = {"workspace_path": str(workspace), "model": "fake-anthropic/fake-model", **create}
        sid = (await rpc.call("session.create", params))["session"]["id"]
        for turn in range(1 if edit is None else 2):
            llm.enqueue(Reply(text=f"Turn {turn}."))
            start = len(rpc.lines)
            content = [{"type": "text", "text": "hi"}]
            rpc.send("session.send_input", {"session_id": sid, "input": {"type": "content", "content": content}})
            await rpc.broadcast("run.done", after=start)
            if edit is not None:
                (workspace / "AGENTS.md").write_text(edit)
    finally:
        assert await rpc.close() == 0
    return [system_text(r.body) for r in llm.requests[before:]]


async def test_the_files_join_the_system_prompt_from_the_user_to_the_workspace(tmp_path: Path) -> None:
    """User file, repository root, a directory with only CLAUDE.md, the workspace (its AGENTS.md over its
    CLAUDE.md); nothing above the repository root; the session's own prompt first, placeholders resolved. An edit
    counts from the next turn on."""
    data, outside = tmp_path / "data", tmp_path / "outside"
    repo = outside / "repo"
    middle = repo / "packages"
    workspace = middle / "app"
    workspace.mkdir(parents=True)
    (repo / ".git").mkdir()
    (data / "AGENTS.md").parent.mkdir(parents=True)
    (data / "AGENTS.md").write_text("User: answer in English.\n")
    (outside / "AGENTS.md").write_text("Above the repository: never read.\n")
    (repo / "AGENTS.md").write_text("Repository: run the tests with pytest.\n")
    (middle / "CLAUDE.md").write_text("Packages: keep them small.\n")
    (workspace / "AGENTS.md").write_text("App: the entry point is main.py.\n")
    (workspace / "CLAUDE.md").write_text("App CLAUDE.md: never read beside an AGENTS.md.\n")
    async with FakeLLMServer(Scenario()) as llm:
        write_providers(data, llm)
        edit = "Edited after the first turn.\n"
        first, second = await _system_prompts(data, workspace, llm, edit=edit, system_prompt="Work in ${workspace}.")
    resolved = workspace.resolve()
    assert first == "\n\n".join(
        [
            f"Work in {resolved}.",
            HEADING,
            f"## {data / 'AGENTS.md'}\n\nUser: answer in English.",
            f"## {repo.resolve() / 'AGENTS.md'}\n\nRepository: run the tests with pytest.",
            f"## {middle.resolve() / 'CLAUDE.md'}\n\nPackages: keep them small.",
            f"## {resolved / 'AGENTS.md'}\n\nApp: the entry point is main.py.",
        ]
    )
    assert second.endswith(f"## {resolved / 'AGENTS.md'}\n\nEdited after the first turn.")


async def test_long_files_are_cut_and_the_nearest_file_has_the_first_claim_on_the_room(tmp_path: Path) -> None:
    """A file gives at most FILE_LIMIT bytes (cut at a line end, with a note); the workspace's file is taken first,
    then the repository's while it fits in TOTAL_LIMIT, and the user's file, which no longer fits, is named."""
    data, repo = tmp_path / "data", tmp_path / "repo"
    workspace = repo / "app"
    workspace.mkdir(parents=True)
    (repo / ".git").mkdir()
    data.mkdir()
    (data / "AGENTS.md").write_text("User file.\n" * 20)
    line = "x" * 99 + "\n"  # 100 bytes a line
    (workspace / "AGENTS.md").write_text(line * 400)  # 40,000 bytes
    (repo / "AGENTS.md").write_text(line * 400)
    async with FakeLLMServer(Scenario()) as llm:
        write_providers(data, llm)
        (system,) = await _system_prompts(data, workspace, llm)
    kept = FILE_LIMIT // 100 * 100  # whole lines only
    assert 2 * kept <= TOTAL_LIMIT < 2 * kept + 220
    assert system.startswith(DEFAULT_SYSTEM_PROMPT.format(root=workspace.resolve()) + "\n\n" + HEADING)
    note = f"[AGENTS.md cut here: the file is 40000 bytes; only its first {kept} are included]"
    assert system.count(note) == 2
    assert system.index(str(repo.resolve() / "AGENTS.md")) < system.index(str(workspace.resolve() / "AGENTS.md"))
    assert system.endswith(f"Left out for want of room: {data / 'AGENTS.md'}.")
    assert "User file." not in system


async def test_with_no_file_the_system_prompt_is_the_sessions_own(tmp_path: Path) -> None:
    """A missing file is skipped; an AGENTS.md that is a directory does not count, so the CLAUDE.md beside it does."""
    data, workspace = tmp_path / "data", tmp_path / "ws"
    (workspace / "AGENTS.md").mkdir(parents=True)
    async with FakeLLMServer(Scenario()) as llm:
        write_providers(data, llm)
        (plain,) = await _system_prompts(data, workspace, llm)
        (workspace / "CLAUDE.md").write_text("Claude file.\n")
        (with_claude,) = await _system_prompts(data, workspace, llm)
    assert plain == DEFAULT_SYSTEM_PROMPT.format(root=workspace.resolve())
    assert with_claude.endswith(f"## {workspace.resolve() / 'CLAUDE.md'}\n\nClaude file.")

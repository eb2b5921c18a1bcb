"""MCP server settings and tool names (docs/engine.md, "MCP servers"): the `.mcp.json` shape, `${VAR}` expansion,
which file counts and which server wins, and the names the model sees."""

from __future__ import annotations

import json
from pathlib import Path

from omniagent.engine.mcp import names
from omniagent.engine.mcp.config import ServerSpec, load_files, merge


def _write(path: Path, document: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))


def test_entries_read_as_stdio_or_http_with_the_environment_expanded(tmp_path: Path) -> None:
    servers = {
        "local": {"command": "${TOOLS}/server", "args": ["--root", "${ROOT:-.}"], "env": {"TOKEN": "${TOKEN}"}},
        "remote": {"url": "https://example.test/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "typed": {"type": "http", "url": "${URL}"},
    }
    _write(tmp_path / "mcp.json", {"mcpServers": servers})
    environ = {"TOOLS": "/opt/tools", "TOKEN": "t0k", "URL": "http://127.0.0.1:9/mcp"}
    specs, problems = load_files(tmp_path, str(tmp_path), environ)
    origin = str(tmp_path / "mcp.json")
    assert problems == []
    assert specs == [
        ServerSpec("local", origin, command="/opt/tools/server", args=("--root", "."), env={"TOKEN": "t0k"}),
        ServerSpec("remote", origin, url="https://example.test/mcp", headers={"Authorization": "Bearer t0k"}),
        ServerSpec("typed", origin, url="http://127.0.0.1:9/mcp"),
    ]
    assert specs[0].transport == "stdio" and specs[1].transport == "http"
    assert specs[1].secrets() == ["Bearer t0k"]


def test_the_project_file_counts_only_when_the_user_file_allows_it_and_wins_by_name(tmp_path: Path) -> None:
    user, workspace = tmp_path / "config", tmp_path / "ws"
    _write(workspace / ".mcp.json", {"mcpServers": {"both": {"command": "project"}, "extra": {"command": "x"}}})
    _write(user / "mcp.json", {"mcpServers": {"both": {"command": "user"}}})
    specs, _ = load_files(user, str(workspace), {})
    assert [(s.name, s.command) for s in specs] == [("both", "user")]
    _write(user / "mcp.json", {"mcpServers": {"both": {"command": "user"}}, "projectServers": True})
    specs, _ = load_files(user, str(workspace), {})
    assert [(s.name, s.command) for s in specs] == [("both", "project"), ("extra", "x")]
    face = [ServerSpec("extra", "the ACP client", command="face")]
    assert [(s.name, s.command) for s in merge(specs, face)] == [("both", "project"), ("extra", "face")]


def test_a_broken_file_or_entry_is_a_problem_that_names_no_value(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text('{"mcpServers": {')
    specs, problems = load_files(tmp_path, str(tmp_path), {})
    assert specs == [] and problems == [f"{tmp_path / 'mcp.json'} is not valid JSON (line 1); no server of it is used"]
    _write(tmp_path / "mcp.json", {"mcpServers": {"a": {"command": "x", "env": {"K": 1}}, "b": []}})
    specs, problems = load_files(tmp_path, str(tmp_path), {})
    assert specs == [] and [p.split(": ", 1)[1] for p in problems] == [
        "`env` must be an object of strings",
        "its entry is not an object",
    ]
    assert load_files(None, str(tmp_path), {}) == ([], [])


def test_tool_names_are_safe_for_every_provider_and_read_back_for_display() -> None:
    assert names.tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert names.tool_name("my server", "do.it") == "mcp__my_server__do_it"
    assert names.tool_name("a__b", "c") == "mcp__a_b__c"  # the first `__` after the prefix always ends the server
    long = names.tool_name("s" * 40, "t" * 40)
    assert len(long) == names.MAX_NAME and long != names.tool_name("s" * 40, "t" * 41)
    assert names.split("mcp__a_b__c__d") == ("a_b", "c__d")
    assert names.split("exec") is None and names.split("mcp__solo") is None

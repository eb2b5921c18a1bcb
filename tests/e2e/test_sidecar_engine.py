"""Our engine through a real `omniagent serve` subprocess: every line schema-checked and held to G1-G4 by the
client (`tests/e2e/sidecar_client.py`); the engine calls the fake LLM over the Anthropic wire, keyed by
`ANTHROPIC_API_KEY` and pointed at it by `ANTHROPIC_BASE_URL`, with a data dir and HOME of the test's own."""

from __future__ import annotations

from pathlib import Path

from omniagent.testing import FakeLLMServer, Reply, Scenario
from tests.e2e.sidecar_client import Sidecar, kind_of, statuses, texts
from tests.mcp_support import START, STDIO, call, http_server, tool_results
from tests.runtime.adapters.engine.harness import KEY, child_env, tool_then_text, workspace


async def test_the_sidecar_drives_the_engine_through_a_permission_turn(tmp_path: Path) -> None:
    """Issue "One system" part 3 acceptance: `discover` lists omniagent (Pinned); `open` agent `omniagent`, prompt,
    the write's permission answered AllowOnce, TurnEnded Completed; the file is written; no key on the wire."""
    ws = workspace(tmp_path)
    async with FakeLLMServer(tool_then_text()) as llm, Sidecar.running(env=child_env(tmp_path, llm)) as sidecar:
        report = await sidecar.ok("discover")
        assert [(a["id"], a["source"]) for a in report["agents"]] == [("omniagent", "Pinned")]
        info = await sidecar.ok("open", agent="omniagent", dir=str(ws))
        session = info["id"]
        assert "Permissions" in info["details"]["capabilities"]["features"]
        assert info["details"]["auth"] == {"Authenticated": {"kind": "ApiKey", "account": None}}
        delivery = await sidecar.ok("prompt", session=session, text="write hello.txt")
        assert delivery == {"prompt_id": "p1", "kind": {"Started": {"turn_id": "t1"}}}
        opened = (await sidecar.wait_event(session, "RequestOpened"))["kind"]["RequestOpened"]["Permission"]
        assert opened["options"] == ["AllowOnce", "AllowAlways", "DenyOnce"]
        assert opened["tool"]["kind"] == "Edit" and opened["tool"]["input"] == {"Path": str(ws / "hello.txt")}
        answer = {"Permission": "AllowOnce"}
        assert await sidecar.ok("answer", session=session, request=opened["id"], answer=answer) is None
        ended = await sidecar.wait_event(session, "TurnEnded")
        assert ended["kind"]["TurnEnded"] == {"stop": {"Completed": {"source": "Protocol"}}, "background": []}
        assert await sidecar.ok("close", session=session) is None
        await sidecar.wait_closed(session)
        events = sidecar.events(session)
    assert (ws / "hello.txt").read_text() == "hello\n"
    assert "".join(texts(events)) == "All done."
    assert statuses(events) == ["Working", "NeedsInput", "Working", "Idle"]
    tools = [e["kind"]["ToolUpdated"]["status"] for e in events if kind_of(e) == "ToolUpdated"]
    assert tools == ["Pending", "Running", "Completed"]
    wire = b"\n".join(str(line).encode() for line in sidecar.lines) + bytes(sidecar.stderr)
    assert KEY.encode() not in wire


async def test_opening_the_engine_without_a_key_is_auth_required_naming_the_variables(tmp_path: Path) -> None:
    """Issue: no provider with a credential → AuthRequired with EnvVar login methods (names, never values)."""
    async with Sidecar.running(env=child_env(tmp_path, None)) as sidecar:
        error = await sidecar.error("open", agent="omniagent", dir=str(workspace(tmp_path)))
    assert error["kind"] == "AuthRequired", error
    names = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY")
    assert error["login"] == [{"EnvVar": {"name": name}} for name in names]


async def test_eof_during_an_open_permission_exits_cleanly_and_a_new_sidecar_resumes_the_session(
    tmp_path: Path,
) -> None:
    """docs/engine.md crash rules through the sidecar: stdin EOF while the engine waits for an answer ends the run
    (interrupted) and the sidecar exits 0; a second sidecar on the same data dir resumes the session by its token
    and runs a turn on it."""
    ws = workspace(tmp_path)
    scenario = Scenario([tool_then_text().steps[0], Reply(text="resumed fine")])
    async with FakeLLMServer(scenario) as llm:
        env = child_env(tmp_path, llm)
        sidecar = await Sidecar.start(env=env)
        try:
            info = await sidecar.ok("open", agent="omniagent", dir=str(ws))
            await sidecar.ok("prompt", session=info["id"], text="write hello.txt")
            await sidecar.wait_event(info["id"], "RequestOpened")
            await sidecar.end_input()
            assert await sidecar.wait_exit() == 0
        finally:
            await sidecar.aclose()
        sidecar.assert_clean()
        assert not (ws / "hello.txt").exists()
        async with Sidecar.running(env=env) as again:
            resumed = await again.ok("open", agent="omniagent", dir=str(ws), resume=info["resume_token"])
            assert resumed["resume_token"] == info["resume_token"]
            await again.ok("prompt", session=resumed["id"], text="go on")
            ended = await again.wait_event(resumed["id"], "TurnEnded")
            assert ended["kind"]["TurnEnded"]["stop"] == {"Completed": {"source": "Protocol"}}
            assert "".join(texts(again.events(resumed["id"]))) == "resumed fine"


async def test_the_sidecar_passes_mcp_servers_whose_tools_are_asked_called_and_whose_death_is_a_diagnostic(
    tmp_path: Path,
) -> None:
    """Issue 13: `open`'s `mcp_servers` become the engine session's servers (the fixture server written with the
    `mcp` SDK, over stdio and streamable HTTP): a call is asked as a permission for an `Mcp` tool, runs, and its
    result reaches the model; the stdio server dying mid-turn is a `Diagnostic` and the turn completes."""
    ws = workspace(tmp_path)
    replies = [
        call("mcp__fixture__echo", text="via the sidecar"),
        call("mcp__web__echo", text="via http"),
        Reply(text="Echoed."),
        call("mcp__fixture__crash"),
        Reply(text="It is gone."),
    ]
    async with (
        FakeLLMServer(Scenario(replies)) as llm,
        http_server() as url,
        Sidecar.running(env=child_env(tmp_path, llm), wait=START) as sidecar,
    ):
        servers = [
            {"name": "fixture", "connection": {"Stdio": {"command": STDIO[0], "args": list(STDIO[1:]), "env": {}}}},
            {"name": "web", "connection": {"Http": {"url": url, "headers": {}}}},
        ]
        info = await sidecar.ok("open", agent="omniagent", dir=str(ws), mcp_servers=servers)
        session = info["id"]
        assert info["details"]["capabilities"]["mcp_transports"] == ["Stdio", "Http"]
        kinds = []
        for text, calls in (("echo", 2), ("crash", 1)):
            start = len(sidecar.lines)
            await sidecar.ok("prompt", session=session, text=text)
            for _ in range(calls):
                opened = await sidecar.wait_event(session, "RequestOpened", start=start)
                start = sidecar.lines.index({"event": opened}) + 1
                request = opened["kind"]["RequestOpened"]["Permission"]
                kinds.append(request["tool"]["kind"])
                await sidecar.ok("answer", session=session, request=request["id"], answer={"Permission": "AllowOnce"})
            ended = await sidecar.wait_event(session, "TurnEnded", start=start)
            assert ended["kind"]["TurnEnded"]["stop"] == {"Completed": {"source": "Protocol"}}
        assert await sidecar.ok("close", session=session) is None
        await sidecar.wait_closed(session)
        events = sidecar.events(session)
        bodies = [r.body for r in llm.requests]
    assert kinds == [
        {"Mcp": {"server": s, "tool": t}} for s, t in (("fixture", "echo"), ("web", "echo"), ("fixture", "crash"))
    ]
    assert [r["content"] for r in tool_results(bodies[2])] == ["echo: via the sidecar", "echo: via http"]
    (diagnostic,) = [e["kind"]["Diagnostic"] for e in events if kind_of(e) == "Diagnostic"]
    failed = next(
        i
        for i, e in enumerate(events)
        if kind_of(e) == "ToolUpdated" and e["kind"]["ToolUpdated"]["status"] == "Failed"
    )
    assert [kind_of(e) for e in events].index("Diagnostic") < failed  # told before the call it explains fails
    assert diagnostic["level"] == "Warning"
    assert "MCP server `fixture` stopped: it exited (exit status: 3)" in diagnostic["message"]
    assert "".join(texts(events)) == "Echoed.It is gone."

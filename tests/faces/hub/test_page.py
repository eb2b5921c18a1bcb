"""The hub's web page in a real headless Chromium (Debian's, driven by Playwright) against the real `omniagent hub`
with our engine on the fake LLM (issue 24's acceptance): log in, start a session from the page, send a prompt and
watch the reply stream, answer a permission by clicking, see the edit as a diff, watch a second client's answer
resolve the prompt on the page, cancel a turn. Each state is a screenshot in the test's folder; the page asks for
nothing off the hub."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.faces.hub.page_harness import PageHub, Screens, logged_in, prompt, start_session
from tests.hub.hub_process import RunningHub, WireClient
from tests.runtime.adapters.engine.harness import child_env, workspace

pytestmark = pytest.mark.timeout(180)

ALLOW = {"Permission": "AllowOnce"}
REPLY = "I'll fix the **greeting** in `hello.txt`."


def _scenario() -> Scenario:
    edit = FakeToolCall("edit", {"path": "hello.txt", "old_string": "hello world", "new_string": "hello, page"})
    return Scenario(
        [
            # Held after its first text deltas, so the test sees the reply while it streams.
            Reply(text=REPLY, chunk_size=4, tool_calls=(edit,), gate="stream", hold_after_events=5),
            Reply(text="Done: the greeting now says *hello, page*."),
            Reply(tool_calls=(FakeToolCall("write", {"path": "notes.txt", "content": "from the page\n"}),)),
            Reply(text="Wrote notes.txt."),
            Reply(text="Thinking it over at length", chunk_size=3, gate="hang", hold_after_events=5),
        ]
    )


async def test_the_acceptance_flow_in_a_browser(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "hello.txt").write_text("hello world\n")
    with FakeLLMServer(_scenario()) as llm:
        async with logged_in(tmp_path, env=child_env(tmp_path, llm)) as world:
            page = world.page
            shot = Screens(page, tmp_path)
            session = await start_session(page, ws)
            await shot("1-session-started")
            await _stream_allow_and_diff(page, llm, shot)
            await _answered_elsewhere(page, world.hub, session, shot)
            await _cancel(page, llm, shot)
            llm.release("hang")
    shot.check()
    assert (ws / "hello.txt").read_text() == "hello, page\n"
    assert (ws / "notes.txt").read_text() == "from the page\n"


async def _stream_allow_and_diff(page: Page, llm: FakeLLMServer, shot: Screens) -> None:
    await prompt(page, "fix the greeting")
    await expect(page.locator(".turn .msg.user .body").first).to_have_text("fix the greeting")
    assert await llm.wait_held_async("stream", 15)
    reply = page.locator(".msg.assistant").first
    await expect(reply).to_have_class(re.compile(r"\bstreaming\b"))
    await expect(reply).to_contain_text("I'll")
    assert "hello.txt" not in await reply.inner_text()  # the rest is still held by the fake LLM
    await expect(page.locator("section.session")).to_have_attribute("data-status", "working")
    await shot("2-streaming")
    llm.release("stream")
    card = page.locator(".dock .request")
    await expect(card).to_contain_text("hello.txt")
    await expect(page.locator("section.session")).to_have_attribute("data-status", "needs-input")
    await expect(page.locator('.session-row[data-activity="needs_input"]')).to_have_count(1)
    await shot("3-permission")
    await card.locator("button[data-choice=AllowOnce]").click()
    await expect(card).to_have_count(0)
    await expect(page.locator(".turn-end")).to_have_text(["turn complete"])
    await expect(reply.locator("strong")).to_have_text("greeting")  # the finished reply as Markdown
    await expect(reply.locator("code")).to_have_text("hello.txt")
    diff = page.locator(".tool .diff")
    await expect(diff.locator(".diff-path")).to_have_text(re.compile(r"hello\.txt$"))
    await expect(diff.locator(".diff-line.del")).to_have_text(["-hello world"])
    await expect(diff.locator(".diff-line.add")).to_have_text(["+hello, page"])
    await expect(page.locator(".record .record-state")).to_have_text(["answered here: Allow once"])
    await shot("4-diff")


async def _answered_elsewhere(page: Page, hub: PageHub, session: str, shot: Screens) -> None:
    """A second client (the sidecar wire from Python, with the bearer token) answers; the page's prompt goes."""
    async with WireClient.connect(RunningHub(hub.url, hub.token, hub.process)) as other:
        await other.ok("attach", session=session, history="none")
        await prompt(page, "now write notes.txt")
        opened = await other.event(session, "RequestOpened")
        request = opened["kind"]["RequestOpened"]["Permission"]["id"]
        card = page.locator(f'.dock .request[data-request="{request}"]')
        await expect(card).to_be_visible()
        await shot("5-asked")
        assert await other.ok("answer", session=session, request=request, answer=ALLOW) is None
        await expect(card).to_have_count(0)
        await expect(page.locator(f'.record[data-request="{request}"] .record-state')).to_have_text("resolved")
        await expect(page.locator(".turn-end")).to_have_text(["turn complete", "turn complete"])
        await expect(page.locator(".msg.assistant .body").last).to_have_text("Wrote notes.txt.")
        await shot("6-answered-elsewhere")


async def _cancel(page: Page, llm: FakeLLMServer, shot: Screens) -> None:
    await prompt(page, "think it over")
    assert await llm.wait_held_async("hang", 15)
    cancel = page.locator("button.cancel")
    await expect(cancel).to_be_enabled()
    await cancel.click()
    await expect(page.locator(".turn-end").last).to_have_text("cancelled")
    await expect(page.locator("section.session")).to_have_attribute("data-status", "idle")
    await expect(cancel).to_be_disabled()
    await shot("7-cancelled")

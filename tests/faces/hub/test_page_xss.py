"""Content from agents cannot run code in the hub's page (issue 24): script tags, `javascript:` links, HTML event
attributes and remote images in a model's reply, a tool's output, a prompt (the session's title), a file's diff,
and, through a scripted agent, in every other string an agent sends (plans, tool titles and commands, questions and
their choices, thinking, diagnostics) render as text in a real Chromium: no dialog, no script run, no element that
could run one, no link but http(s), and no request off the hub."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.faces.hub.page_harness import Browser, Screens, logged_in
from tests.runtime.adapters.engine.harness import child_env, workspace

pytestmark = pytest.mark.timeout(180)

HOSTILE = (
    '<script>window.pwned=1;alert(1)</script><img src=x onerror="window.pwned=2;alert(2)">'
    '<a href="javascript:window.pwned=3;alert(3)">raw link</a><svg onload="window.pwned=4"></svg>'
    '<iframe src="javascript:window.pwned=5"></iframe><b onmouseover="window.pwned=6">hover</b>'
)
MARKDOWN = (
    f"Here it is: {HOSTILE}\n\n"
    "[a javascript link](javascript:window.pwned=7) [an escaped one](java&#x73;cript:window.pwned=8) "
    "[a data link](data:text/html,<script>window.pwned=9</script>) [a vbscript link](vbscript:msgbox)\n\n"
    "![a remote image](http://tracker.invalid/pixel.png) [a fine link](https://example.invalid/docs)\n\n"
    '<a href="javascript:alert(10)">raw anchor</a>\n\n```html\n<script>window.pwned=11</script>\n```\n'
)
# Elements that run or load something; none may come from an agent's content (the prompt box is the page's form).
ACTIVE = ["script", "img", "iframe", "svg", "object", "embed", "video", "audio", "link", "style", "form", "base"]


async def _nothing_active(page: Page, browser: Browser) -> None:
    """The page's content area holds no active element, no event attribute, no link but http(s), and nothing ran."""
    found = await page.evaluate(
        """(active) => {
            const bad = [];
            for (const node of document.querySelectorAll("#main *")) {
                if (active.includes(node.localName) && !node.matches("form.prompt")) bad.push(`<${node.localName}>`);
                for (const attr of node.attributes) {
                    if (attr.name.startsWith("on")) bad.push(`${node.localName}[${attr.name}]`);
                }
            }
            for (const link of document.querySelectorAll("#app a[href]")) {
                const href = link.getAttribute("href");
                if (!/^(https?:|#\\/)/.test(href)) bad.push(`a[href=${href}]`);
            }
            return {bad, pwned: window.pwned === undefined ? null : window.pwned};
        }""",
        ACTIVE,
    )
    assert found == {"bad": [], "pwned": None}
    assert browser.dialogs == [] and browser.errors == []
    assert browser.elsewhere() == []


async def test_a_hostile_reply_tool_output_prompt_and_diff_render_inert(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "evil.html").write_text(HOSTILE + "\n")
    scenario = Scenario(
        [
            Reply(text=MARKDOWN, tool_calls=(FakeToolCall("read", {"path": "evil.html"}),)),
            Reply(tool_calls=(FakeToolCall("write", {"path": "page.html", "content": HOSTILE + "\n"}),)),
            Reply(text="**done**"),
        ]
    )
    with FakeLLMServer(scenario) as llm:
        async with logged_in(tmp_path, env=child_env(tmp_path, llm)) as world:
            page, browser = world.page, world.browser
            await page.locator("#new-dir").fill(str(ws))
            await page.locator("#new-session button[type=submit]").click()
            box = page.locator(".prompt-text")
            await box.fill(HOSTILE)
            await box.press("Enter")
            await page.locator(".dock .request button[data-choice=AllowOnce]").click()
            await expect(page.locator(".turn-end")).to_have_text(["turn complete"])
            await Screens(page, tmp_path)("xss-engine")
            reply = page.locator(".msg.assistant .body").first
            await expect(reply).to_contain_text("<script>window.pwned=1;alert(1)</script>")
            await expect(reply).to_contain_text("[a javascript link](javascript:window.pwned=7)")
            # Only the http(s) links are links (the image too, as a link: nothing is fetched), opened apart.
            links = reply.locator("a")
            await expect(links).to_have_count(2)
            hrefs = await links.evaluate_all("links => links.map(link => [link.getAttribute('href'), link.rel])")
            assert hrefs == [
                ["http://tracker.invalid/pixel.png", "noopener noreferrer nofollow"],
                ["https://example.invalid/docs", "noopener noreferrer nofollow"],
            ]
            # `read` numbers the lines it shows.
            await expect(page.locator(".tool-output pre").first).to_have_text(f"     1\t{HOSTILE}")
            await expect(page.locator(".diff-line.add")).to_have_text(["+" + HOSTILE])
            await expect(page.locator(".turn .msg.user .body")).to_have_text(HOSTILE)  # the prompt as sent
            await expect(page.locator(".session-title")).to_contain_text("<script>")  # titled by its prompt
            await _nothing_active(page, browser)
    assert (ws / "page.html").read_text() == HOSTILE + "\n"


def _mock_script(path: Path) -> Path:
    """A scripted agent that puts the hostile text in every string an event carries."""
    tool = {
        "id": "tool-1", "kind": "Execute", "title": HOSTILE, "status": "Completed",
        "input": {"Command": {"command": HOSTILE, "cwd": None}}, "output": HOSTILE,
        "diffs": [{"path": HOSTILE, "old_text": HOSTILE + "\n", "new_text": "safe\n"}], "locations": [], "raw": None,
    }  # fmt: skip
    question = {
        "id": "q1",
        "questions": [
            {
                "id": "a", "text": HOSTILE, "header": HOSTILE, "multi_select": False, "allows_free_text": True,
                "choices": [{"id": "c1", "label": HOSTILE, "description": HOSTILE}],
            }
        ],
    }  # fmt: skip
    steps = [
        {"Emit": {"UserMessage": {"message_id": "u1", "text": HOSTILE}}},
        {"Emit": {"ReasoningDelta": {"message_id": "r1", "text": HOSTILE}}},
        {"Emit": {"MessageEnded": {"message_id": "r1"}}},
        {"Emit": {"PlanUpdated": {"entries": [{"text": HOSTILE, "status": "InProgress"}]}}},
        {"Emit": {"ToolUpdated": tool}},
        {"Emit": {"Diagnostic": {"level": "Warning", "message": HOSTILE}}},
        {"Emit": {"RequestOpened": {"Question": question}}},
        "AwaitAnswer",
        {"Emit": {"TextDelta": {"message_id": "m1", "text": MARKDOWN}}},
        {"Emit": {"MessageEnded": {"message_id": "m1"}}},
        {"End": {"Completed": {"source": "Protocol"}}},
    ]
    path.write_text(json.dumps({"turns": [steps]}))
    return path


async def test_every_string_a_scripted_agent_sends_renders_inert(tmp_path: Path) -> None:
    script = _mock_script(tmp_path / "hostile.json")
    async with logged_in(tmp_path, "--mock", str(script)) as world:
        page, browser = world.page, world.browser
        await page.locator("#new-dir").fill(str(tmp_path))
        await page.locator("#new-session button[type=submit]").click()
        box = page.locator(".prompt-text")
        await box.fill("go")
        await box.press("Enter")
        card = page.locator(".dock .request[data-kind=Question]")
        await expect(card.locator("legend")).to_contain_text("<script>")
        await expect(card.locator(".choice")).to_contain_text("<img src=x")
        await expect(page.locator(".plan li")).to_have_text([HOSTILE])
        await expect(page.locator(".tool-title")).to_have_text([HOSTILE])
        await expect(page.locator(".tool-input")).to_have_text(["$ " + HOSTILE])
        await expect(page.locator(".diff-path")).to_have_text([HOSTILE])
        await expect(page.locator(".diff-line.del")).to_have_text(["-" + HOSTILE])
        await expect(page.locator(".note.warning")).to_have_text([f"Warning: {HOSTILE}"])
        await expect(page.locator(".msg.thinking .body")).to_have_text([HOSTILE])
        await expect(page.locator(".msg.user .body")).to_have_text(["go", HOSTILE])
        await _nothing_active(page, browser)
        await card.locator("input[type=radio]").check()
        await card.locator("button", has_text="Answer").click()
        await expect(page.locator(".turn-end")).to_have_text(["turn complete"])
        await expect(page.locator(".msg.assistant .body")).to_contain_text("<iframe src=")
        await Screens(page, tmp_path)("xss-scripted")
        await _nothing_active(page, browser)

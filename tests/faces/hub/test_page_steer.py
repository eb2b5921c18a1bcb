"""Watching and steering sessions from the hub's page in a real Chromium, with our engine on the fake LLM: another
client's session appears in the list live, with its status and usage, and opens with what was asked and answered;
an option set on the page reaches every client; a prompt sent while a turn runs is queued and can be taken back; a
turn is rewound (conversation and files) and a session forked from a reply, the fork's model seeing only what came
before that reply; a logged-in agent's plan usage shows as bars."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.e2e.agents.logins import login_world
from tests.faces.hub.page_harness import Screens, chromium, log_in, logged_in, page_hub, prompt
from tests.hub.hub_process import RunningHub, WireClient
from tests.runtime.adapters.engine.harness import child_env, workspace

pytestmark = pytest.mark.timeout(180)


async def test_another_clients_session_live_options_and_the_queue(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    scenario = Scenario(
        [
            Reply(text="Hello from the agent."),
            Reply(tool_calls=(FakeToolCall("write", {"path": "a.txt", "content": "a\n"}),)),
            Reply(text="Wrote a.txt."),
            Reply(text="C done."),
        ]
    )
    with FakeLLMServer(scenario) as llm:
        async with logged_in(tmp_path, env=child_env(tmp_path, llm)) as world:
            hub, page = world.hub, world.page
            shot = Screens(page, tmp_path)
            async with WireClient.connect(RunningHub(hub.url, hub.token, hub.process)) as other:
                session = (await other.ok("open", agent="omniagent", dir=str(ws)))["id"]
                row = page.locator(f'.session-row[data-session="{session}"]')
                await expect(row.locator(".row-agent")).to_have_text("omniagent")  # no reload: the list is live
                await expect(row).to_have_attribute("data-activity", "idle")
                await other.ok("prompt", session=session, text="hello")
                await other.event(session, "TurnEnded")
                await expect(row.locator(".context")).to_contain_text("tokens")
                await expect(row.locator(".row-title")).to_have_text("hello")
                await shot("glance")
                await row.click()
                await expect(page.locator(".msg.user .body")).to_have_text(["hello"])  # asked by the other client
                await expect(page.locator(".msg.assistant .body")).to_have_text(["Hello from the agent."])
                await _set_an_option(page, other, session)
                await _queue_and_take_back(page, llm)
                await shot("queued")
    bodies = [json.dumps(request.body) for request in llm.requests]
    assert not any("never sent" in body for body in bodies) and any("prompt C" in body for body in bodies)


async def _set_an_option(page: Page, other: WireClient, session: str) -> None:
    """The reasoning effort set on the page: the hub confirms it to every client (`SessionUpdated`)."""
    effort = page.locator(".option", has_text="Reasoning effort").locator("select")
    option = await effort.get_attribute("data-option")
    assert option is not None
    await effort.select_option("high")
    await other.until(
        lambda line: (
            "event" in line
            and "SessionUpdated" in line["event"]["kind"]
            and line["event"]["kind"]["SessionUpdated"]["configuration"]["options"].get(option) == "high"
        )
    )
    await expect(effort).to_have_value("high")


async def _queue_and_take_back(page: Page, llm: FakeLLMServer) -> None:
    await prompt(page, "write a.txt")
    card = page.locator(".dock .request")
    await expect(card).to_be_visible()  # the turn runs, waiting for a permission
    await expect(page.locator("button.send")).to_have_text("Queue")
    await prompt(page, "never sent")
    queued = page.locator(".queued li")
    await expect(queued).to_have_count(1)
    await queued.locator("button", has_text="Remove").click()
    await expect(queued).to_have_count(0)
    await prompt(page, "prompt C")
    await expect(queued.locator(".queued-text")).to_have_text(["prompt C"])
    await card.locator("button[data-choice=AllowOnce]").click()
    await expect(page.locator(".turn-end")).to_have_text(["turn complete"] * 3)
    await expect(queued).to_have_count(0)
    await expect(page.locator(".turn .msg.user .body")).to_have_text(["hello", "write a.txt", "prompt C"])
    await expect(page.locator(".msg.assistant .body").last).to_have_text("C done.")


async def test_a_model_picked_on_the_form_then_rewind_a_turn_and_fork_from_a_reply(tmp_path: Path) -> None:
    """A session started from the form with a model other than the default (its requests name that model) and
    permissions approved; a turn rewound with its file; a fork from the first reply; the fork ended."""
    ws = workspace(tmp_path)
    scenario = Scenario(
        [
            Reply(text="First answer."),
            Reply(tool_calls=(FakeToolCall("write", {"path": "b.txt", "content": "b\n"}),)),
            Reply(text="Wrote b.txt."),
            Reply(text="Fork answer."),
        ]
    )
    with FakeLLMServer(scenario) as llm:
        async with logged_in(tmp_path, env=child_env(tmp_path, llm)) as world:
            page = world.page
            shot = Screens(page, tmp_path)
            await page.locator("#new-dir").fill(str(ws))
            # A model other than the agent's default, from the choices the form read from the agent.
            models = page.locator("#new-model option")
            await expect(models.nth(2)).to_be_attached()
            chosen = await models.last.get_attribute("value")
            assert chosen and "/" in chosen
            await page.locator("#new-model").select_option(chosen)
            await page.locator("#new-permission").select_option("AutoApprove")
            await page.locator("#new-session button[type=submit]").click()
            original = await page.locator("section.session").get_attribute("data-session")
            await prompt(page, "first question")
            await expect(page.locator(".turn-end")).to_have_text(["turn complete"])
            asked = llm.requests[0].body
            assert isinstance(asked, dict) and asked["model"] == chosen.split("/", 1)[1]
            await prompt(page, "write b.txt")
            await expect(page.locator(".turn-end")).to_have_text(["turn complete"] * 2)
            assert (ws / "b.txt").read_text() == "b\n"
            # Rewind the second turn, its file with it.
            second = page.locator(".turn").nth(1)
            await second.locator(".msg.user").hover()
            await second.locator("button.rewind").click()
            await page.locator(".confirm button[data-scope=ConversationAndFiles]").click()
            await expect(second).to_have_class("turn rewound")
            await expect(page.locator(".turn.rewound")).to_have_count(1)
            await shot("rewound")
            # Fork from the first reply: a new session, shown at once, whose model sees only the first turn.
            first = page.locator(".msg.assistant").first
            await first.hover()
            await first.locator("button.fork").click()
            fork = page.locator("section.session")
            await expect(fork).not_to_have_attribute("data-session", original or "")
            await expect(page.locator(".session-row:not(.past *)")).to_have_count(2)
            await prompt(page, "in the fork")
            await expect(page.locator(".msg.assistant .body")).to_have_text(["Fork answer."])
            await shot("forked")
            # Ending the fork (a second click confirms): for every client, and the page shows it ended.
            fork_id = await fork.get_attribute("data-session")
            end = page.locator("button.end")
            await end.click()
            await expect(end).to_have_text("End it for every client?")
            await end.click()
            await expect(fork).to_have_attribute("data-status", "ended")
            await expect(page.locator(".prompt-text")).to_be_disabled()
            await expect(page.locator(f'.session-row[data-session="{fork_id}"]')).to_have_attribute(
                "data-activity", "ended"
            )
    assert not (ws / "b.txt").exists()
    last = json.dumps(llm.requests[-1].body)
    assert "first question" in last and "First answer." in last and "in the fork" in last
    assert "write b.txt" not in last


async def test_plan_usage_bars_from_the_real_codex(tmp_path: Path) -> None:
    """Codex 0.171.0 logged in to a ChatGPT plan (the fake's usage route, in a loopback-only namespace: see
    tests/e2e/agents/logins.py) beside our engine: the page shows codex's windows as bars, and none for the engine
    (its wire cannot report plan usage)."""
    quota = {"plan": "plus", "windows": [{"used_percent": 42, "minutes": 300, "resets_in": 3600}]}
    async with login_world(tmp_path, quota) as world:
        env = world.runtime_env(codex=world.launcher("codex", "chatgpt"))
        async with logged_in(tmp_path, env=env) as logged:
            page = logged.page
            bars = page.locator("#plan-usage")
            await expect(bars.locator(".plan-usage")).to_have_count(1)
            codex = bars.locator('.plan-usage[data-agent="codex"]')
            await expect(codex.locator(".plan-agent")).to_have_text("codex · plus")
            await expect(codex.locator(".window-label")).to_have_text(["Session"])
            await expect(codex.locator(".window-used")).to_have_text(["42%"])
            assert await codex.locator("meter").get_attribute("value") == "42"
            await Screens(page, tmp_path)("plan-usage")


async def test_the_page_comes_back_when_the_hub_does(tmp_path: Path) -> None:
    """The hub stops and starts again on its port: the page says it is reconnecting, comes back by itself (its
    cookie still good: same token), follows the session again (resumed by the new hub: the agent has the
    conversation, the hub's log starts anew) and goes on with it."""
    ws = workspace(tmp_path)
    scenario = Scenario([Reply(text="Before the restart."), Reply(text="After the restart.")])
    with FakeLLMServer(scenario) as llm:
        env = child_env(tmp_path, llm)
        first = page_hub(tmp_path / "data", env=env)
        hub = await first.__aenter__()
        try:
            async with chromium(tmp_path / "profile", hub.url) as browser:
                page = await browser.page()
                await log_in(page, hub)
                await page.locator("#new-dir").fill(str(ws))
                await page.locator("#new-session button[type=submit]").click()
                session = await page.locator("section.session").get_attribute("data-session")
                await prompt(page, "before")
                await expect(page.locator(".msg.assistant .body")).to_have_text(["Before the restart."])
                await first.__aexit__(None, None, None)
                await expect(page.locator("body")).to_have_attribute("data-connection", "closed")
                await expect(page.locator("#connection")).to_have_text("reconnecting…")
                port = hub.url.rsplit(":", 1)[1]
                async with page_hub(tmp_path / "data", "--port", port, env=env):
                    await expect(page.locator("body")).to_have_attribute("data-connection", "open")
                    view = page.locator(f'section.session[data-session="{session}"]')
                    await expect(view).to_have_attribute("data-status", "idle")
                    await prompt(page, "after")
                    await expect(page.locator(".msg.assistant .body").last).to_have_text("After the restart.")
                    await Screens(page, tmp_path)("back")
                assert browser.errors == [] and browser.elsewhere() == []
        finally:
            await first.__aexit__(None, None, None)
    last = json.dumps(llm.requests[-1].body)
    assert "before" in last and "Before the restart." in last  # the resumed agent kept the conversation

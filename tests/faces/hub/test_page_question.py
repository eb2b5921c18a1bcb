"""A question the agent asks, answered on the hub's web page in a real headless Chromium: our engine's `ask_user`
(a choice, then free text) shows as a card with its choices and a text box; the answers given by clicking and typing
reach the model, and the card goes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.async_api import expect

from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.faces.hub.page_harness import Screens, logged_in, prompt, start_session
from tests.runtime.adapters.engine.harness import child_env, workspace

pytestmark = pytest.mark.timeout(180)

CHOOSE = {"kind": "select", "question": "Which colour for the banner?", "options": ["crimson", "teal"]}
TYPE = {"kind": "input", "question": "What should the banner say?", "placeholder": "Welcome"}


async def test_a_question_is_answered_on_the_page_by_choosing_and_by_typing(tmp_path: Path) -> None:
    scenario = Scenario(
        [
            Reply(tool_calls=(FakeToolCall("ask_user", CHOOSE),)),
            Reply(tool_calls=(FakeToolCall("ask_user", TYPE),)),
            Reply(text="A teal banner it is."),
        ]
    )
    with FakeLLMServer(scenario) as llm:
        async with logged_in(tmp_path, env=child_env(tmp_path, llm)) as world:
            page = world.page
            shot = Screens(page, tmp_path)
            await start_session(page, workspace(tmp_path))
            await prompt(page, "make a banner")
            card = page.locator(".dock .request[data-kind=Question]")
            await expect(card).to_contain_text("Which colour for the banner?")
            await expect(card.locator("label.choice")).to_have_text(["crimson", "teal"])
            await expect(page.locator("section.session")).to_have_attribute("data-status", "needs-input")
            await shot("1-choice")
            await card.locator("label.choice", has_text="teal").locator("input").check()
            await card.locator("button", has_text="Answer").click()
            await expect(card).to_contain_text("What should the banner say?")
            await shot("2-text")
            await card.locator("input.answer-text").fill("Hello <b>there</b>")
            await card.locator("button", has_text="Answer").click()
            await expect(card).to_have_count(0)
            await expect(page.locator(".msg.assistant").last).to_contain_text("A teal banner it is.")
            await shot("3-answered")
        bodies = [json.dumps(request.body) for request in llm.requests]
    shot.check()
    assert len(bodies) == 3
    assert "The user chose: teal" in bodies[1]
    assert "The user answered: Hello <b>there</b>" in bodies[2]

"""Two ways into the hub's page in a real Chromium: `omniagent hub open` (the browser it starts is handed a file of
the hub's folder, which forwards to the page with a one-time code in the fragment: logged in, the code gone from the
address, a second use refused, the token in no URL or log), and a batch job's report through `--batch-dir` (a real
`omniagent batch` run with the oracle, its report and a trial's file opened from the page's link)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from tests.batch.support import run_batch, write_tasks
from tests.faces.hub.page_harness import ROOT, Screens, chromium, log_in, logged_in, page_hub
from tests.runtime.adapters.engine.harness import child_env

pytestmark = pytest.mark.timeout(180)

VERIFY = {"command": 'if [ "$(cat answer.txt)" = right ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt'}


def _recording_browser(path: Path) -> Path:
    """A program that records the one argument it is given (in PATH.txt), to stand for a browser."""
    path.write_text(f'#!/bin/sh\nprintf %s "$1" > "{path.with_suffix(".txt")}"\n')
    path.chmod(0o755)
    return path


async def _hub_open(data_dir: Path, browser_command: Path) -> str:
    """Run `omniagent hub open` with `$BROWSER` set to a program that records what it was given; returns that."""
    record = browser_command.with_suffix(".txt")
    env = os.environ | {"BROWSER": str(browser_command), "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "omniagent", "hub", "open", "--data-dir", str(data_dir),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    assert "opened" in out.decode() and "#code=" not in out.decode()
    return record.read_text()


async def test_hub_open_logs_the_page_in_once_and_the_token_is_in_no_url(tmp_path: Path) -> None:
    async with page_hub(tmp_path / "data", "--mock", "turn") as hub:
        given = await _hub_open(tmp_path / "data", _recording_browser(tmp_path / "browser"))
        # The browser is given a file of the hub's folder, not the code: the command line of a process is public.
        forward = tmp_path / "data" / "hub" / "open.html"
        assert given == forward.as_uri() and (forward.stat().st_mode & 0o777) == 0o600
        async with chromium(tmp_path / "profile", hub.url, files=True) as browser:
            page = await browser.page()
            await page.goto(given)
            await expect(page.locator("#app")).to_be_visible()
            await expect(page).to_have_url(hub.url + "/")  # the code left the address bar (and the history)
            await expect(page.locator(".new-session")).to_be_visible()
            await Screens(page, tmp_path)("open-logged-in")
            assert browser.elsewhere() == [] and browser.errors == []
            urls = browser.requests + browser.sockets
        async with chromium(tmp_path / "again", hub.url, files=True) as second:
            page = await second.page()
            await page.goto(given)  # the same link again: used
            await expect(page.locator("#login")).to_be_visible()
            await expect(page.locator("#login-problem")).to_contain_text("used or expired")
            await page.locator("#token").fill("not the token")
            await page.locator("#login-form button[type=submit]").click()
            await expect(page.locator("#login-problem")).to_have_text("That is not the hub's token.")
            await log_in(page, hub)  # the token still works
            urls += second.requests + second.sockets
        assert urls and not [url for url in urls if hub.token in url or "code=" in url]
        assert hub.token not in hub.log()


def _task(task: str, answer: str) -> dict[str, Any]:
    solution = {"command": f"echo {answer} > answer.txt"}
    return {"id": task, "prompt": "answer", "agent": "oracle", "solution": solution, "verifier": VERIFY}


async def test_the_batch_report_opens_from_the_page_with_its_trials_files(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [_task("right", "right"), _task("wrong", "wrong")])
    out = tmp_path / "out"
    code, _, err = await run_batch(str(tasks), "--out", str(out), env=child_env(tmp_path, None), cwd=tmp_path)
    assert code == 0, err
    assert (out / "report.html").is_file()
    async with logged_in(tmp_path, "--mock", "turn", "--batch-dir", str(out)) as world:
        hub, page = world.hub, world.page
        link = page.locator("#batch-link")
        await expect(link).to_be_visible()
        async with world.browser.context.expect_page() as opened:
            await link.click()
        report = await opened.value
        await expect(report).to_have_url(hub.url + "/batch/report.html")
        await expect(report.locator('#matrix td[data-task="right"]')).to_be_visible()
        await Screens(report, tmp_path)("batch-report")
        result = report.locator('#matrix td[data-task="right"] a[title="result.json"]')
        await result.click()
        await expect(report).to_have_url(f"{hub.url}/batch/tasks/right/oracle/result.json")
        await expect(report.locator("body")).to_contain_text('"task"')

"""`OUT/report.html` (issue 23, item 6) read as a user reads it: a real batch (the oracle, -k 3, mixed rewards), then
the page opened from disk in a headless Chromium (Debian's, driven by Playwright; no browser is downloaded). What it
shows must be job.json's figures, its links must open each trial's files, it must fetch nothing, and markup in a
run's error must stay text."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
from playwright.async_api import BrowserContext, Dialog, Page, Route, async_playwright

from omniagent.batch.evaluation.confidence import wilson
from tests.batch.support import run_batch, write_tasks
from tests.chromium import ARGS as CHROMIUM_ARGS
from tests.chromium import executable as chromium_executable
from tests.runtime.adapters.engine.harness import child_env

pytestmark = pytest.mark.timeout(120)

WAIT_MS = 15_000  # the bound on one page action
VERIFY = {"command": 'if [ "$(cat answer.txt)" = right ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt'}
# A workspace source that does not exist: the run fails and its error, which names the path, reaches the page.
HOSTILE = '<script>window.pwned=1;alert(1)</script><img src=x onerror="window.pwned=2;alert(2)">'
FLAKY = 'case "$PWD" in *@2) echo wrong;; *) echo right;; esac > answer.txt'  # the trial's path names it


def _oracle_task(task: str, solution: str, **extra: Any) -> dict[str, Any]:
    line = {"id": task, "prompt": "answer", "agent": "oracle", "solution": {"command": solution}, "verifier": VERIFY}
    return line | extra


@asynccontextmanager
async def chromium(profile: Path) -> AsyncIterator[BrowserContext]:
    """The system's Chromium with a fresh profile (Playwright's driver, never its browser download)."""
    async with async_playwright() as playwright:
        context = await playwright.chromium.launch_persistent_context(
            profile, executable_path=chromium_executable(), args=CHROMIUM_ARGS, headless=True
        )
        context.set_default_timeout(WAIT_MS)
        try:
            yield context
        finally:
            await context.close()


async def _texts(page: Page, selector: str) -> list[str]:
    return [text.strip() for text in await page.locator(selector).all_inner_texts()]


async def test_the_report_shows_job_json_links_every_trial_fetches_nothing_and_keeps_markup_inert(
    tmp_path: Path,
) -> None:
    task_file = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            _oracle_task("right", "echo right > answer.txt"),
            _oracle_task("wrong", "echo wrong > answer.txt"),
            _oracle_task("flaky", FLAKY),
            _oracle_task("hostile", "echo right > answer.txt", workspace={"copy": f"missing/{HOSTILE}"}),
        ],
    )
    out = tmp_path / "out"
    code, _, err = await run_batch(
        str(task_file), "-k", "3", "-j", "4", "--out", str(out), env=child_env(tmp_path, None), cwd=tmp_path
    )
    assert code == 1, err  # the hostile task's trials fail
    job = json.loads((out / "job.json").read_text())
    requests: list[str] = []
    dialogs: list[str] = []

    async def refuse(route: Route) -> None:
        await route.abort()  # nothing leaves even if the page asked; the listener records that it asked

    async with chromium(tmp_path / "profile") as context:
        context.on("request", lambda request: requests.append(request.url))
        await context.route(lambda url: not url.startswith("file:"), refuse)
        page = await context.new_page()

        async def dismiss(dialog: Dialog) -> None:
            dialogs.append(dialog.message)
            await dialog.dismiss()

        page.on("dialog", dismiss)
        await page.goto((out / "report.html").as_uri())
        await page.screenshot(path=tmp_path / "report.png", full_page=True)
        await _check_header_and_agents(page, job)
        await _check_matrix(page, out)
        await _check_inert(page)
        await _follow_a_trajectory(page)
    assert (tmp_path / "report.png").read_bytes().startswith(b"\x89PNG")
    assert dialogs == []
    assert requests and all(url.startswith("file:///") for url in requests), requests


async def _check_header_and_agents(page: Page, job: dict[str, Any]) -> None:
    """The counts and the oracle's figures as job.json has them: 12 trials, mean reward 5/12 with its Wilson
    interval, pass@1..3, the failures by kind."""
    assert await page.locator("#finished").inner_text() == str(job["finished"]) == "12"
    assert await page.locator("#planned").inner_text() == str(job["planned"]) == "12"
    assert await page.locator("#state").inner_text() == "complete"
    oracle = job["agents"]["oracle"]
    row = page.locator('#agents tr[data-agent="oracle"]')

    async def shown(column: str) -> str:
        return (await row.locator(f"td[data-col={column}]").inner_text()).strip()

    assert await shown("trials") == "12" and await shown("completed") == "9"
    assert await shown("mean") == f"{oracle['mean_reward']:.3f}" == "0.417"
    assert sorted(oracle["pass_at_k"]) == ["1", "2", "3"]
    for k, value in oracle["pass_at_k"].items():
        assert await shown(f"pass{k}") == f"{value:.3f}"
        assert await page.locator("#agents th", has_text=f"pass@{k}").count() == 1
    low, high = wilson(oracle["rewards"]["counts"]["1"], oracle["trials"])
    assert await shown("ci") == f"[{low:.3f}, {high:.3f}] Wilson"
    assert await shown("errors") == "failed 3 · workspace 3"


async def _check_matrix(page: Page, out: Path) -> None:
    """Each cell: its trials' rewards (or status) in trial order and their mean; every trial's four files linked,
    each link to a file that exists."""
    expected = {
        "right": (["1", "1", "1"], "mean 1"),
        "wrong": (["0", "0", "0"], "mean 0"),
        "flaky": (["1", "0", "1"], "mean 0.667"),
        "hostile": (["failed", "failed", "failed"], None),
    }
    for task, (scores, mean) in expected.items():
        cell = f'#matrix td[data-task="{task}"][data-agent="oracle"]'
        assert await _texts(page, f"{cell} .score") == scores, task
        assert await _texts(page, f"{cell} .mean") == ([mean] if mean else []), task
    links = await page.eval_on_selector_all("#matrix a", "links => links.map(link => link.href)")
    assert len(links) == 4 * 4 * 3  # four files, four tasks, three trials
    files = _files(links)
    assert all(file.is_relative_to(out / "tasks") for file in files)
    assert {file.parent.name for file in files} == {"oracle", "oracle@2", "oracle@3"}
    assert {file.name for file in files} == {"trajectory.json", "diff.patch", "result.json", "events.jsonl"}


def _files(links: list[str]) -> list[Path]:
    """The files `links` (absolute file: URLs, as the browser resolved them) name, each checked to exist."""
    files = []
    for link in links:
        assert link.startswith("file:///"), link
        file = Path(unquote(urlparse(link).path))
        assert file.is_file(), link
        files.append(file)
    return files


async def _check_inert(page: Page) -> None:
    """The hostile error is shown as the text it is, in the trials table and the cells' tooltips: no script or
    image element came of it, nothing ran."""
    assert await page.locator("script").count() == 0
    assert await page.locator("img").count() == 0
    assert await page.evaluate("() => window.pwned === undefined")
    errors = await _texts(page, '#trials tr:has(td:text-is("hostile")) td.text')
    assert len(errors) == 3 and all(HOSTILE in error for error in errors), errors
    title = await page.locator('#matrix td[data-task="hostile"] li[data-trial="1"]').get_attribute("title")
    assert title is not None and HOSTILE in title


async def _follow_a_trajectory(page: Page) -> None:
    """The flaky task's second trial's trajectory link opens its ATIF trajectory."""
    link = page.locator('#matrix td[data-task="flaky"] li[data-trial="2"] a', has_text="trajectory")
    assert await link.get_attribute("href") == "tasks/flaky/oracle@2/trajectory.json"
    await link.click()
    await page.wait_for_url("**/tasks/flaky/oracle@2/trajectory.json")
    trajectory = json.loads(await page.locator("pre").inner_text())
    assert trajectory["schema_version"] == "ATIF-v1.7"
    assert trajectory["extra"]["task"] == "flaky"

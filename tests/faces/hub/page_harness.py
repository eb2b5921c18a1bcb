"""Test support for the hub's web page: the real `omniagent hub` process, Debian's Chromium driven by Playwright (its
driver only: no browser is downloaded), a page logged in to the hub, and a record of every request the page made.

The browser gets a fresh profile each time and the flags a root CI needs (`--no-sandbox`); any request to a host
other than the hub is aborted, and recorded, so a test can say that the page asked for nothing elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import BrowserContext, Dialog, Page, Route, WebSocket, async_playwright, expect

from tests.chromium import ARGS as CHROMIUM_ARGS
from tests.chromium import executable as chromium_executable
from tests.hub.hub_process import hub_subprocess

ROOT = Path(__file__).resolve().parents[3]
VIEWPORT = {"width": 1280, "height": 800}
WAIT_MS = 15_000  # the bound on one page action or expectation
WAIT = 30.0  # seconds: the bound on the hub's start and stop
URL_LINE = re.compile(r"omniagent hub listening on (\S+)")
expect.set_options(timeout=WAIT_MS)


@dataclass
class PageHub:
    """A running hub: its base URL, its token, its data dir and the file its stderr goes to."""

    url: str
    token: str
    data_dir: Path
    stderr: Path
    process: asyncio.subprocess.Process

    def log(self) -> str:
        return self.stderr.read_text(errors="replace")


@contextlib.asynccontextmanager
async def page_hub(data_dir: Path, *extra: str, env: Mapping[str, str] | None = None) -> AsyncIterator[PageHub]:
    """`omniagent hub --port 0 --data-dir DATA_DIR EXTRA…` (every refusal logged: OMNIAGENT_LOG=debug), stopped with
    SIGTERM after."""
    environment = dict(env if env is not None else os.environ) | {"OMNIAGENT_LOG": "debug"}
    stderr = data_dir / "hub-stderr.log"
    os.makedirs(data_dir, exist_ok=True)
    argv = ["-m", "omniagent", "hub", "--port", "0", "--data-dir", str(data_dir), *extra]
    async with hub_subprocess(argv, environment, stderr, wait=WAIT) as (process, banner):
        found = URL_LINE.search(banner)
        assert found is not None, f"no URL in {banner!r}: {stderr.read_text()}"
        token = (data_dir / "hub" / "token").read_text().strip()
        yield PageHub(found.group(1), token, data_dir, stderr, process)


@dataclass
class Browser:
    """One Chromium profile: its context, what every page of it requested, and the dialogs any page opened."""

    context: BrowserContext
    hub_url: str
    requests: list[str] = field(default_factory=list)
    sockets: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    async def page(self) -> Page:
        page = await self.context.new_page()

        async def dismiss(dialog: Dialog) -> None:
            self.dialogs.append(dialog.message)
            await dialog.dismiss()

        def websocket(socket: WebSocket) -> None:
            self.sockets.append(socket.url)

        page.on("dialog", dismiss)
        page.on("websocket", websocket)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        return page

    def elsewhere(self) -> list[str]:
        """Every request and WebSocket of the pages that went to another origin than the hub's."""
        ws_url = "ws" + self.hub_url.removeprefix("http")
        return [url for url in self.requests if not url.startswith((self.hub_url + "/", "file:"))] + [
            url for url in self.sockets if not url.startswith(ws_url + "/")
        ]


@contextlib.asynccontextmanager
async def chromium(profile: Path, hub_url: str, *, files: bool = False) -> AsyncIterator[Browser]:
    """The system's Chromium with a fresh profile; any request off the hub (but `file:` ones when `files`) is
    recorded and aborted."""
    executable = chromium_executable()

    async def refuse(route: Route) -> None:
        await route.abort()

    async with async_playwright() as playwright:
        context = await playwright.chromium.launch_persistent_context(
            profile, executable_path=executable, args=CHROMIUM_ARGS, headless=True, viewport=VIEWPORT
        )
        context.set_default_timeout(WAIT_MS)
        browser = Browser(context, hub_url)
        context.on("request", lambda request: browser.requests.append(request.url))
        ours = (hub_url + "/", "file:") if files else (hub_url + "/",)
        await context.route(lambda url: not url.startswith(ours), refuse)
        try:
            yield browser
        finally:
            await context.close()


@dataclass
class LoggedIn:
    """A hub, a Chromium profile, and one page of it logged in to the hub."""

    hub: PageHub
    browser: Browser
    page: Page


@contextlib.asynccontextmanager
async def logged_in(tmp_path: Path, *extra: str, env: Mapping[str, str] | None = None) -> AsyncIterator[LoggedIn]:
    """`page_hub` with `extra` and `env` (its data dir `tmp_path/data`), Chromium with a fresh profile
    (`tmp_path/profile`), and a page logged in. After the test's block (when it did not fail): no page asked
    anything of another origin, opened a dialog or threw an error."""
    async with page_hub(tmp_path / "data", *extra, env=env) as hub, chromium(tmp_path / "profile", hub.url) as browser:
        page = await browser.page()
        await log_in(page, hub)
        yield LoggedIn(hub, browser, page)
    assert (browser.elsewhere(), browser.dialogs, browser.errors) == ([], [], [])


async def log_in(page: Page, hub: PageHub) -> None:
    """Open the page and log in with the token, as a person pasting it does."""
    await page.goto(hub.url + "/")
    await page.locator("#token").fill(hub.token)
    await page.locator("#login-form button[type=submit]").click()
    await page.locator("#app").wait_for(state="visible")


async def prompt(page: Page, text: str) -> None:
    """Type `text` into the session's prompt box and send it with Enter, as a person does."""
    box = page.locator(".prompt-text")
    await box.fill(text)
    await box.press("Enter")


async def start_session(page: Page, directory: Path) -> str:
    """Start a session of our engine in `directory` from the page's form; its id, once the page shows it."""
    await page.locator("#new-agent").select_option("omniagent")
    await page.locator("#new-dir").fill(str(directory))
    await page.locator("#new-session button[type=submit]").click()
    session = page.locator("section.session")
    await expect(session).to_be_visible()
    session_id = await session.get_attribute("data-session")
    assert session_id is not None
    await expect(page.locator(f'.session-row[data-session="{session_id}"]')).to_contain_text("omniagent")
    return session_id


class Screens:
    """Screenshots of a page's states, written as the test's artifacts (`NAME.png` in `folder`)."""

    def __init__(self, page: Page, folder: Path) -> None:
        self.page = page
        self.folder = folder
        self.taken: list[Path] = []

    async def __call__(self, name: str) -> None:
        path = self.folder / f"{name}.png"
        await self.page.screenshot(path=path)
        self.taken.append(path)

    def check(self) -> None:
        """Every screenshot is a PNG file."""
        assert self.taken and all(path.read_bytes().startswith(b"\x89PNG") for path in self.taken)

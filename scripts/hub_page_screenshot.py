"""Make docs/hub-page.png: the hub's web page on a real `omniagent hub` running our engine against the fake LLM.

    python scripts/hub_page_screenshot.py [--out docs/hub-page.png]

Two sessions: one idle (a summary asked by another client), and the one shown: a Markdown reply, the plan, an edit
with its diff, and a permission to run the tests waiting for an answer. Debian's Chromium, headless, 1280x800; the
session is opened by a client of the sidecar wire and shown by the page, logged in with a one-time code.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright, expect
from websockets.asyncio.client import connect

from omniagent.faces.hub.web.door import mint_code
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
PROMPT = "Rename parse_args to read_options, then run the tests"
PLAN = [
    {"content": "Rename parse_args in cli.py", "status": "completed"},
    {"content": "Update the caller in main.py", "status": "completed"},
    {"content": "Run the tests", "status": "in_progress"},
]
REPLY = (
    "I'll rename **`parse_args`** to `read_options`:\n\n"
    "1. `cli.py`: the definition and its docstring\n2. `main.py`: its one caller\n\nThen I'll run the tests."
)


def _scenario() -> Scenario:
    edit = FakeToolCall(
        "edit", {"path": "cli.py", "old_string": "def parse_args(argv):", "new_string": "def read_options(argv):"}
    )
    caller = FakeToolCall("edit", {"path": "main.py", "old_string": "parse_args(", "new_string": "read_options("})
    tests = FakeToolCall("exec", {"command": "pytest -q"})
    return Scenario(
        [
            Reply(text="The README explains how to install the service and run it locally.", match="Summarize"),
            Reply(text=REPLY, tool_calls=(FakeToolCall("plan", {"entries": PLAN}), edit, caller)),
            Reply(text="Renamed in both files. Now the tests:", tool_calls=(tests,)),
        ]
    )


def _workspace(folder: Path) -> Path:
    work = folder / "shop-api"
    work.mkdir()
    (work / "cli.py").write_text(
        'import argparse\n\n\ndef parse_args(argv):\n    """The command line, read."""\n'
        "    parser = argparse.ArgumentParser()\n    return parser.parse_args(argv)\n"
    )
    (work / "main.py").write_text("from cli import parse_args\n\noptions = parse_args(None)\n")
    return work


async def _client(url: str, token: str, work: Path) -> None:
    """Another client: a session asked for a summary (idle after), and the one the page shows, its edits allowed."""
    lines: list[dict[str, Any]] = []
    headers = {"Authorization": f"Bearer {token}"}
    async with connect(url.replace("http", "ws") + "/sidecar", additional_headers=headers) as ws:

        async def until(found: Any) -> dict[str, Any]:
            while True:
                for line in lines:
                    if found(line):
                        lines.remove(line)
                        return line
                lines.extend(json.loads(text) for text in str(await ws.recv()).split("\n"))

        async def call(frame: int, cmd: str, **fields: Any) -> Any:
            await ws.send(json.dumps({"id": frame, "cmd": cmd, **fields}))
            return (await until(lambda line: line.get("id") == frame))["ok"]

        def kind(name: str) -> Any:
            return lambda line: name in json.dumps(line.get("event", {}).get("kind", ""))

        first = await call(1, "open", agent="omniagent", dir=str(work))
        await call(2, "prompt", session=first["id"], text="Summarize the README")
        await until(kind("TurnEnded"))
        second = await call(3, "open", agent="omniagent", dir=str(work))
        await call(4, "prompt", session=second["id"], text=PROMPT)
        for frame in (5, 6):
            asked = await until(kind("RequestOpened"))
            request = asked["event"]["kind"]["RequestOpened"]["Permission"]["id"]
            answer = {"Permission": "AllowOnce"}
            await call(frame, "answer", session=second["id"], request=request, answer=answer)
        await until(kind("RequestOpened"))  # the tests: left for the page


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "hub-page.png")
    out = parser.parse_args().out.resolve()
    with tempfile.TemporaryDirectory() as temp, FakeLLMServer(_scenario()) as llm:
        folder = Path(temp)
        work = _workspace(folder)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OMNIAGENT_", "ANTHROPIC_", "OPENAI_"))}
        env |= {
            "HOME": str(folder), "PATH": "/usr/bin:/bin", "OMNIAGENT_DATA_DIR": str(folder / "data"),
            "ANTHROPIC_API_KEY": "sk-ant-screenshot", "ANTHROPIC_BASE_URL": llm.url,
            "PYTHONPATH": str(ROOT / "src"),
        }  # fmt: skip
        hub = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "omniagent", "hub", "--port", "0", "--data-dir", str(folder / "data"),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, env=env,
        )  # fmt: skip
        try:
            assert hub.stdout is not None
            found = re.search(r"listening on (\S+)", (await hub.stdout.readline()).decode())
            assert found is not None, "the hub did not start"
            url = found.group(1)
            token = (folder / "data" / "hub" / "token").read_text().strip()
            await _client(url, token, work)
            await _shoot(url, token, out)
        finally:
            hub.terminate()
            await hub.wait()
    print(f"wrote {out}")


async def _shoot(url: str, token: str, out: Path) -> None:
    executable = shutil.which("chromium")
    assert executable is not None, "needs Debian's chromium"
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        page = await browser.new_page(viewport={"width": 1280, "height": 800})
        await page.goto(f"{url}/#code={mint_code(token)}")
        await page.locator(".session-row").nth(1).click()
        await expect(page.locator(".dock .request")).to_be_visible()
        await expect(page.locator(".plan li")).to_have_count(3)
        await page.locator(".prompt-text").blur()
        await page.screenshot(path=out)
        await browser.close()


if __name__ == "__main__":
    asyncio.run(main())

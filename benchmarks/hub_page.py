"""The hub's web page with a 5,000-message transcript (issue 24; docs/performance.md, "The hub's page"):

A mock session of the real `omniagent hub` plays one turn of 2,500 prompts and 2,500 Markdown replies (a user
message, a reply's text and its end each: 7,500 events, within the hub's 10,000 kept). Then Debian's Chromium
(headless, through Playwright) opens the session's page, already logged in, and the script reads:

1. first contentful paint, and the transcript shown: the first frame after the page holds all 5,000 messages
   (from the navigation's start);
2. the main thread's long tasks (over 50 ms) while loading: count, longest, total;
3. scrolling the whole transcript from the bottom to the top, one screen a frame: frame intervals (median, p95,
   max), frames over 50 ms, the time it took, and the long tasks meanwhile (the replies' Markdown is rendered as
   they come near the screen);
4. the DOM's element count and the JS heap once shown.

With `--compare`, each run also loads the page with `content-visibility` turned off (every item laid out and
painted), to show what it buys. Median of `--runs`.

    python benchmarks/hub_page.py [--runs 3] [--messages 5000] [--compare]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, async_playwright
from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package says how Chromium starts
from tests import chromium

REPLY = (
    "Reply {i}: the change touches **three** files.\n\n"
    "- `src/module_{i}.py`: the parser now keeps the *position* of each token\n"
    "- `tests/test_module_{i}.py`: two cases for the empty input\n"
    "- `docs/module.md`: the new option\n\n"
    "```python\ndef parse(text: str) -> list[Token]:\n    return list(tokens(text, keep_positions=True))\n```\n\n"
    "See [the docs](https://example.invalid/docs/{i}) for more."
)
# Run in the page before its own scripts (Playwright's init script, not subject to the page's CSP): the long tasks,
# and the first frame after the transcript holds every message.
PROBE = """
window.__bench = {shown: null, longTasks: []};
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.__bench.longTasks.push([entry.startTime, entry.duration]);
}).observe({type: "longtask", buffered: true});
const wanted = %d;
function tick() {
  const transcript = document.querySelector(".transcript");
  if (transcript && Number(transcript.dataset.messages) >= wanted) {
    requestAnimationFrame(() => { window.__bench.shown = performance.now(); });
    return;
  }
  requestAnimationFrame(tick);
}
requestAnimationFrame(tick);
"""
NO_CONTENT_VISIBILITY = """
document.addEventListener("DOMContentLoaded", () => {
  const style = document.createElement("style");
  style.textContent = ".chunk { content-visibility: visible !important; }";
  document.head.append(style);
});
"""
SCROLL = """
async () => {
  const scroller = document.querySelector(".scroller");
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  const frames = [];
  let last = await frame();
  const start = performance.now();
  const from = window.__bench.longTasks.length;
  while (scroller.scrollTop > 0) {
    // As a wheel does: its event (the transcript stops following the bottom), then the scroll.
    scroller.dispatchEvent(new WheelEvent("wheel", {deltaY: -scroller.clientHeight}));
    scroller.scrollTop = Math.max(0, scroller.scrollTop - scroller.clientHeight);
    const now = await frame();
    frames.push(now - last);
    last = now;
  }
  return {frames, ms: performance.now() - start, longTasks: window.__bench.longTasks.slice(from)};
}
"""


def _script(path: Path, messages: int) -> Path:
    pairs = messages // 2
    steps: list[Any] = []
    for i in range(pairs):
        question = f"Question {i}: what changed in module {i}?"
        steps.append({"Emit": {"UserMessage": {"message_id": f"u{i}", "text": question}}})
        steps.append({"Emit": {"TextDelta": {"message_id": f"m{i}", "text": REPLY.format(i=i)}}})
        steps.append({"Emit": {"MessageEnded": {"message_id": f"m{i}"}}})
    steps.append({"End": {"Completed": {"source": "Protocol"}}})
    path.write_text(json.dumps({"turns": [steps]}))
    return path


@contextlib.asynccontextmanager
async def _hub(script: Path, data: Path) -> AsyncIterator[tuple[str, str]]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "omniagent", "hub", "--port", "0", "--data-dir", str(data), "--mock", str(script),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        found = re.search(r"listening on (\S+)", (await proc.stdout.readline()).decode())
        assert found is not None, "the hub did not start"
        yield found.group(1), (data / "hub" / "token").read_text().strip()
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        await proc.wait()


async def _fill(url: str, token: str, directory: str) -> str:
    """Open a session, prompt it, and wait for its turn to end; the session goes on in the hub. Its id."""
    headers = {"Authorization": f"Bearer {token}"}
    async with connect(url.replace("http", "ws") + "/sidecar", additional_headers=headers, max_size=None) as ws:
        await ws.recv()
        await ws.send(json.dumps({"id": 1, "cmd": "open", "agent": "mock", "dir": directory}))
        session = None
        while True:
            for text in str(await ws.recv()).split("\n"):
                line = json.loads(text)
                if line.get("id") == 1:
                    session = line["ok"]["id"]
                    await ws.send(json.dumps({"id": 2, "cmd": "prompt", "session": session, "text": "go"}))
                elif "TurnEnded" in json.dumps(line.get("event", {}).get("kind", "")):
                    assert session is not None
                    return session


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _measure(
    browser: Browser, url: str, token: str, session: str, messages: int, *, off: bool
) -> dict[str, float]:
    context = await browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=off)
    page = await context.new_page()
    await page.goto(url + "/")
    await page.locator("#token").fill(token)
    await page.locator("#login-form button[type=submit]").click()
    await page.locator("#app").wait_for(state="visible")
    await page.close()
    page = await context.new_page()
    await page.add_init_script(PROBE % messages)
    if off:
        await page.add_init_script(NO_CONTENT_VISIBILITY)
    await page.goto(f"{url}/#/s/{session}")
    await page.wait_for_function("() => window.__bench && window.__bench.shown !== null", timeout=120_000)
    loaded = await page.evaluate(
        """() => ({
            fcp: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null,
            shown: window.__bench.shown,
            longTasks: window.__bench.longTasks.slice(),
            elements: document.getElementsByTagName("*").length,
            heap: performance.memory ? performance.memory.usedJSHeapSize : null,
        })"""
    )
    scrolled = await page.evaluate(SCROLL)
    await context.close()
    load_tasks = [duration for _, duration in loaded["longTasks"]]
    scroll_tasks = [duration for _, duration in scrolled["longTasks"]]
    frames = scrolled["frames"]
    return {
        "fcp_ms": loaded["fcp"],
        "shown_ms": loaded["shown"],
        "load_long_tasks": len(load_tasks),
        "load_longest_ms": max(load_tasks, default=0.0),
        "load_long_total_ms": sum(load_tasks),
        "scroll_frames": len(frames),
        "scroll_ms": scrolled["ms"],
        "frame_p50_ms": statistics.median(frames),
        "frame_p95_ms": _quantile(frames, 0.95),
        "frame_max_ms": max(frames),
        "frames_over_50ms": sum(1 for frame in frames if frame > 50),
        "scroll_longest_task_ms": max(scroll_tasks, default=0.0),
        "elements": loaded["elements"],
        "heap_mib": (loaded["heap"] or 0) / 2**20,
    }


def _report(label: str, runs: list[dict[str, float]]) -> None:
    print(f"\n{label} (median of {len(runs)} runs)")
    for key in runs[0]:
        values = [run[key] for run in runs if run[key] is not None]
        print(f"  {key:24} {statistics.median(values):10.1f}   (runs: {', '.join(f'{v:.1f}' for v in values)})")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--compare", action="store_true", help="also load the page with content-visibility off")
    options = parser.parse_args()
    executable = chromium.executable()
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        script = _script(folder / "transcript.json", options.messages)
        async with _hub(script, folder) as (url, token), async_playwright() as playwright:
            session = await _fill(url, token, str(folder))
            print(f"{options.messages} messages in session {session} of {url}")
            browser = await playwright.chromium.launch(executable_path=executable, args=chromium.ARGS, headless=True)
            variants = {"content-visibility: auto (the page as shipped)": False}
            if options.compare:
                variants["content-visibility off (every item laid out)"] = True
            results: dict[str, list[dict[str, float]]] = {label: [] for label in variants}
            for _ in range(options.runs):
                for label, off in variants.items():
                    results[label].append(await _measure(browser, url, token, session, options.messages, off=off))
            await browser.close()
    for label, runs in results.items():
        _report(label, runs)
    print(f"\nmachine: {os.cpu_count()} CPUs; Chromium headless, 1280x800")


if __name__ == "__main__":
    asyncio.run(main())

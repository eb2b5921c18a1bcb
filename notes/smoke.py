import asyncio, shutil, subprocess, sys, os, re
from pathlib import Path
from playwright.async_api import async_playwright

ARGS = ["--headless","--no-sandbox","--disable-gpu","--disable-quic","--no-first-run","--disable-background-networking","--disable-component-update","--disable-sync"]

async def main():
    tmp = Path("/tmp/smoke"); shutil.rmtree(tmp, ignore_errors=True); tmp.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "omniagent", "hub", "--port", "0", "--data-dir", str(tmp), "--mock", "turn"], stdout=subprocess.PIPE, stderr=open(tmp/"err","wb"))
    url = re.search(r"on (\S+)", proc.stdout.readline().decode()).group(1)
    token = (tmp/"hub"/"token").read_text().strip()
    try:
        async with async_playwright() as p:
            ctx = await p.chromium.launch_persistent_context(tmp/"profile", executable_path=shutil.which("chromium"), args=ARGS, headless=True)
            page = await ctx.new_page()
            page.on("console", lambda m: print("console:", m.type, m.text))
            page.on("pageerror", lambda e: print("pageerror:", e))
            page.on("request", lambda r: print("req", r.method, r.url))
            await page.goto(url + "/")
            await page.fill("#token", token)
            await page.click("#login-form button")
            await page.wait_for_selector("#new-session", timeout=10000)
            await page.fill("#new-dir", str(tmp))
            await page.click("#new-session button[type=submit]")
            await page.wait_for_selector(".session", timeout=10000)
            await page.fill(".prompt-text", "run the tests")
            await page.press(".prompt-text", "Enter")
            await page.wait_for_selector(".request button", timeout=10000)
            await page.screenshot(path=str(tmp/"a.png"))
            await page.click(".request button[data-choice=AllowOnce]")
            await page.wait_for_selector(".turn-end", timeout=10000)
            await page.screenshot(path=str(tmp/"b.png"))
            print(await page.inner_text(".transcript"))
            await ctx.close()
    finally:
        proc.terminate(); proc.wait()
        print(open(tmp/"err").read()[-3000:])
asyncio.run(main())

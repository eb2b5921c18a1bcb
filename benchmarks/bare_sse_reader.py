"""The floor of the engine's streaming figures: a bare httpx reader of the same Anthropic stream, as a process.

    python benchmarks/bare_sse_reader.py URL KEY

For each line read on stdin it POSTs one streaming Messages request to URL with one warm `httpx.AsyncClient`,
reads the SSE lines, and writes one compact JSON line per text delta (`{"delta":…,"offset":…}`, the stdlib `json`,
flushed) to stdout; a `{"done":true}` line ends each answer. No models, no store, no engine: what any client must
do to show the text as it comes.
"""

from __future__ import annotations

import asyncio
import json
import sys

import httpx

BODY = {"model": "fake-model", "max_tokens": 4096, "stream": True, "messages": [{"role": "user", "content": "go"}]}


async def main(url: str, key: str) -> None:
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    out = sys.stdout.buffer
    headers = {"x-api-key": key, "anthropic-version": "2023-06-01", "accept": "text/event-stream"}
    async with httpx.AsyncClient() as client:
        while await stdin.readline():
            offset = 0
            async with client.stream("POST", url, headers=headers, json=BODY) as response:
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    event = json.loads(line[5:])
                    if event["type"] == "content_block_delta" and event["delta"]["type"] == "text_delta":
                        text = event["delta"]["text"]
                        out.write(json.dumps({"delta": text, "offset": offset}, separators=(",", ":")).encode() + b"\n")
                        out.flush()
                        offset += len(text.encode())
            out.write(b'{"done":true}\n')
            out.flush()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))

"""Client 1 of the reattach tests, as a process of its own (the test kill -9's it mid-turn): opens a session in the
hub through `omniagent.faces.cli.remote`, prompts, and prints each event it receives as one JSON line on stdout
(`{"sequence", "kind", "request"}`), flushed at once, until it is killed.

    OMNIAGENT_HUB_TOKEN=… python tests/hub/first_client.py URL AGENT DIR PROMPT
"""

from __future__ import annotations

import asyncio
import json
import sys

from omniagent.faces.cli.remote import HubLink
from omniagent.protocols.sidecar.events import RequestOpened
from omniagent.serving.hub_token import hub_token


async def main(url: str, agent: str, directory: str, prompt: str) -> None:
    async with HubLink.connect(url, hub_token()) as link:
        session = await link.open(agent, directory)
        print(json.dumps({"session": session.id}), flush=True)
        await session.prompt(prompt)
        async for event in session.events:
            kind = event.kind
            request = kind.request.request.id if isinstance(kind, RequestOpened) else None
            wire = event.dump()["kind"]
            name = wire if isinstance(wire, str) else next(iter(wire))
            print(json.dumps({"sequence": event.sequence, "kind": name, "request": request}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))

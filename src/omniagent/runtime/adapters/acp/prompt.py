"""A prompt as ACP content blocks: inline media the agent advertised, then one text block naming every attachment.

Every attachment path is referenced in the text; images (and on ACP audio and PDFs) under the
inline cap are also sent inline when the agent's prompt capabilities allow. Read problems are returned as warning
sentences for the adapter to report; they never fail the turn.
"""

from __future__ import annotations

import asyncio
import base64
import mimetypes
from pathlib import Path
from typing import Any

from omniagent.runtime.adapters.acp.info import AgentFacts
from omniagent.runtime.driver import PromptInput

# Bytes an attachment may have to be sent inline; a larger file is only referenced by its path.
INLINE_ATTACHMENT_CAP = 5 * 1024 * 1024


async def prompt_blocks(prompt: PromptInput, facts: AgentFacts) -> tuple[list[dict[str, Any]], list[str]]:
    """The `session/prompt` blocks for `prompt`, and warnings about attachments that could not be inlined."""
    blocks: list[dict[str, Any]] = []
    warnings: list[str] = []
    for path in prompt.attachments:
        mime = mimetypes.guess_type(path)[0] or ""
        kind = _inline_kind(mime, facts)
        if kind is None:
            continue
        try:
            data = await asyncio.to_thread(_read_capped, Path(path))
        except OSError as exc:
            warnings.append(f"could not read attachment {path}: {exc.strerror or exc}")
            continue
        if data is None:
            continue  # too large to inline; the text still names it
        encoded = base64.b64encode(data).decode()
        if kind == "resource":
            blocks.append(
                {"type": "resource", "resource": {"uri": Path(path).as_uri(), "blob": encoded, "mimeType": mime}}
            )
        else:
            blocks.append({"type": kind, "data": encoded, "mimeType": mime})
    blocks.append({"type": "text", "text": prompt_text(prompt)})
    return blocks, warnings


def prompt_text(prompt: PromptInput) -> str:
    """The caller's text, then one line per attachment path."""
    if not prompt.attachments:
        return prompt.text
    listed = "\n".join(f"- {path}" for path in prompt.attachments)
    return f"{prompt.text}\n\nAttached files:\n{listed}"


def _inline_kind(mime: str, facts: AgentFacts) -> str | None:
    if mime.startswith("image/") and facts.image:
        return "image"
    if mime.startswith("audio/") and facts.audio:
        return "audio"
    if mime == "application/pdf" and facts.embedded:
        return "resource"
    return None


def _read_capped(path: Path) -> bytes | None:
    if path.stat().st_size > INLINE_ATTACHMENT_CAP:
        return None
    return path.read_bytes()

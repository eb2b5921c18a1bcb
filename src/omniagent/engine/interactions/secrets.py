"""Secret answers: the values users typed into a `secret` question, kept in memory only, and masked everywhere.

How a secret is handled (docs/engine.md, "Questions to the user"; docs/security.md, "Secret answers"): the model
never sees it. The answer is kept here, per session, for the life of the engine process; the `ask_user` tool tells
the model the name of an environment variable (`OMNIAGENT_SECRET_<n>`). A command gets that variable only when its
command line names it and the user approved that very command (in every permission mode, one by one: a command that
holds the value can print it in any encoding, so the user's approval is the guarantee, not the masking). Commands
that do not name it never have it, so `env | base64` has nothing to launder.

It is never written to the store, a log, a wire or a model request by the engine: tool output and view hints that
would carry it (an approved command printing it, a file read back) are masked before anything records or sends them,
live output included, and so are its common encodings (base64 at every alignment, hex, reversed, percent-encoded),
a second line of defence; a file checkpoint whose content holds it is withheld.

What this is not: the question itself (questions.py) or the exec environment (omniagent.sandbox's environment.py
takes the variables).
"""

from __future__ import annotations

import base64
import dataclasses
import re
import urllib.parse
from collections.abc import Iterable

from omniagent.engine.tools import ToolResult
from omniagent.engine.tools.views import DiffFile, DiffView, JsonView, MarkdownView, TextView, View

# What a secret becomes wherever it would have appeared.
MASK = "[secret]"
ENV_PREFIX = "OMNIAGENT_SECRET_"
# A secret's variable named in a command line (`$OMNIAGENT_SECRET_3`, `${OMNIAGENT_SECRET_3:0:4}`, …).
_NAMED = re.compile(ENV_PREFIX + r"([0-9]+)")
# Secrets shorter than this are masked only literally: the encodings of a few characters would mask ordinary text.
MIN_ENCODED_CHARS = 6


class Secrets:
    """Every session's secret answers, by the variable name commands read them from."""

    def __init__(self) -> None:
        self._values: dict[str, dict[str, str]] = {}

    def keep(self, session_id: str, number: int, value: str) -> str:
        """Keep `value` for the session; returns the environment variable that carries it."""
        name = f"{ENV_PREFIX}{number}"
        self._values.setdefault(session_id, {})[name] = value
        return name

    def named_in(self, session_id: str, command: str) -> tuple[str, ...]:
        """The session's secret variables that `command` names, in the order first named: the ones it may get once
        the user approves it."""
        kept = self._values.get(session_id, {})
        names = dict.fromkeys(f"{ENV_PREFIX}{m.group(1)}" for m in _NAMED.finditer(command))
        return tuple(name for name in names if name in kept)

    def env(self, session_id: str, names: Iterable[str]) -> tuple[tuple[str, str], ...]:
        """The variables `names` (as `named_in` gave them) with their values, for one approved command."""
        kept = self._values.get(session_id, {})
        return tuple((name, kept[name]) for name in names if name in kept)

    def scrubber(self, session_id: str) -> Scrubber:
        """What masks the session's secrets (a no-op when it has none)."""
        return Scrubber(self._values.get(session_id, {}).values())

    def forget(self, session_id: str) -> None:
        """Drop a removed session's secrets."""
        self._values.pop(session_id, None)


class Scrubber:
    """Masks a fixed set of secrets in text; empty secrets are ignored (they cannot be told apart from nothing)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        forms = {form for secret in secrets if secret for form in encoded_forms(secret)}
        # Longest first: a secret that contains another is masked whole.
        self._secrets = sorted(forms, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def text(self, text: str) -> str:
        """`text` with every secret masked."""
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text

    def holds(self, data: bytes) -> bool:
        """Whether `data` contains a secret (in UTF-8)."""
        return any(secret.encode() in data for secret in self._secrets)

    def result(self, result: ToolResult) -> ToolResult:
        """A tool result with its output and every text of its view hints masked."""
        if not self._secrets:
            return result
        views = tuple(self._view(v) for v in result.views)
        return dataclasses.replace(result, output=self.text(result.output), views=views)

    def stream(self) -> StreamScrubber:
        """A masker for text that arrives in pieces (live tool output)."""
        return StreamScrubber(self)

    def longest_prefix_at_end(self, text: str) -> int:
        """The length of the longest tail of `text` that could begin a secret (it must wait for the next piece)."""
        best = 0
        for secret in self._secrets:
            for k in range(min(len(secret) - 1, len(text)), best, -1):
                if text.endswith(secret[:k]):
                    best = k
                    break
        return best

    def _view(self, view: View) -> View:
        match view:
            case TextView() | MarkdownView() | JsonView():
                return dataclasses.replace(view, text=self.text(view.text))
            case DiffView(files=files):
                return DiffView(files=tuple(self._file(f) for f in files))
        return view

    def _file(self, file: DiffFile) -> DiffFile:
        hunks = tuple(dataclasses.replace(h, lines=tuple(self.text(line) for line in h.lines)) for h in file.hunks)
        return dataclasses.replace(file, hunks=hunks)


class StreamScrubber:
    """Masks secrets across pieces: a tail that could be the start of a secret is held back until the next piece
    (or `flush`) shows whether it is one."""

    def __init__(self, scrubber: Scrubber) -> None:
        self._scrubber = scrubber
        self._held = ""

    def feed(self, piece: str) -> str:
        """The part of `piece` (after what was held) that can be sent now, masked."""
        text = self._scrubber.text(self._held + piece)
        hold = self._scrubber.longest_prefix_at_end(text)
        self._held = text[len(text) - hold :] if hold else ""
        return text[: len(text) - hold]

    def flush(self) -> str:
        """What is still held: no secret can complete it any more."""
        held, self._held = self._held, ""
        return held


def encoded_forms(secret: str) -> set[str]:
    """`secret` and the encodings a command most often prints it in: base64 (standard and URL-safe, at each of the
    three byte alignments it can have inside longer data, only the characters that depend on the secret alone),
    hex (lower and upper case, plain and byte by byte with spaces, as `od -tx1` prints it), reversed, percent-encoded.
    A second line of defence for approved commands and the files they write: not a guarantee, since no list of
    encodings is complete (docs/security.md)."""
    forms = {secret}
    if len(secret) < MIN_ENCODED_CHARS:
        return forms
    raw = secret.encode()
    for pad in range(3):
        encoded = base64.b64encode(bytes(pad) + raw).decode()
        # Character i covers input bits 6i..6i+6: keep those lying wholly within the secret's bits.
        first = -(-8 * pad // 6)
        last = (8 * (pad + len(raw))) // 6
        core = encoded[first:last]
        forms.update((core, core.replace("+", "-").replace("/", "_")))
    hexed = raw.hex()
    spaced = raw.hex(" ")
    forms.update((hexed, hexed.upper(), spaced, spaced.upper(), secret[::-1], urllib.parse.quote(secret, safe="")))
    return {secret} | {form for form in forms if len(form) >= MIN_ENCODED_CHARS}

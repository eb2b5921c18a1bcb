"""HTML → readable text for `fetch`, with the standard library's `html.parser` (no dependency, no network).

What the model gets: the title as a `#` heading, headings as `#`…`######`, paragraphs and blocks separated by
blank lines, list items as `- `, table rows as cells joined by ` | `, `<pre>` kept verbatim in a fence, links as
`[text](href)` with the href resolved against the page URL, images as their alt text. Scripts, styles, `<head>`
(but its title) and pure markup (`<svg>`, `<template>`, `<canvas>`) are dropped. Whitespace collapses as a browser
collapses it.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

__all__ = ["html_to_text"]

# Content of these elements is never text a reader sees.
_SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe", "object", "canvas"})
# Elements that start and end a block (a blank line around them).
_BLOCKS = frozenset(
    {
        "p", "div", "section", "article", "main", "header", "footer", "aside", "nav", "blockquote", "figure",
        "figcaption", "ul", "ol", "dl", "table", "form", "fieldset", "details", "summary", "address", "hr",
        "h1", "h2", "h3", "h4", "h5", "h6", "pre",
    }
)  # fmt: skip
# Elements that end a line without a blank one.
_LINES = frozenset({"br", "li", "tr", "dt", "dd", "caption"})
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source", "wbr"})
_SPACES = re.compile(r"[ \t\r\n\f\v]+")
_BLANK_RUNS = re.compile(r"\n{3,}")


class _Reader(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self._base = base_url
        self._out: list[str] = []
        self._skip = 0  # depth inside skipped elements
        self._pre = 0
        self._links: list[tuple[str, int]] = []  # (href, output length when the link opened)
        self._cells = 0  # cells already written in the current table row
        self.title = ""
        self._in_title = False

    # Output helpers -------------------------------------------------------------------------------------------

    def _text(self, text: str) -> None:
        if self._pre:
            self._out.append(text)
            return
        text = _SPACES.sub(" ", text)
        if not text.strip() and (not self._out or self._out[-1].endswith((" ", "\n"))):
            return
        if self._out and self._out[-1].endswith("\n"):
            text = text.lstrip()
        self._out.append(text)

    def _break(self, blank: bool) -> None:
        tail = "".join(self._out[-2:])
        if not self._out:
            return
        want = "\n\n" if blank else "\n"
        if tail.endswith(want):
            return
        if self._out[-1].endswith(" "):
            self._out[-1] = self._out[-1].rstrip(" ")
        self._out.append("\n" if tail.endswith("\n") else want)

    # Parser callbacks -----------------------------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and not self.title:
            self._in_title = True
        if tag in _SKIPPED:
            if tag not in _VOID:
                self._skip += 1
            return
        if self._skip:
            return
        named = dict(attrs)
        if tag in _BLOCKS:
            self._break(blank=True)
        elif tag in _LINES:
            self._break(blank=False)
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._out.append("#" * int(tag[1]) + " ")
        elif tag == "li":
            self._out.append("- ")
        elif tag == "pre":
            self._pre += 1
            self._out.append("```\n")
        elif tag == "tr":
            self._cells = 0
        elif tag in ("td", "th"):
            if self._cells:
                self._out.append(" | ")
            self._cells += 1
        elif tag == "a":
            # Links within the page or to script say nothing a reader can follow: their text stays, bare.
            href = (named.get("href") or "").strip()
            keep = href and not href.startswith(("#", "javascript:"))
            self._links.append((urljoin(self._base, href) if keep else "", len("".join(self._out))))
        elif tag == "img" and named.get("alt"):
            self._text(f"[image: {named['alt']}]")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in _SKIPPED:
            self._skip = max(self._skip - 1, 0)
            return
        if self._skip:
            return
        if tag == "pre" and self._pre:
            self._pre -= 1
            self._out.append("```" if "".join(self._out[-1:]).endswith("\n") else "\n```")
        if tag == "a" and self._links:
            self._close_link()
        if tag in _BLOCKS:
            self._break(blank=True)
        elif tag in ("li", "tr", "dt", "dd", "caption"):
            self._break(blank=False)

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if not self._skip:
            self._text(data)

    def _close_link(self) -> None:
        href, start = self._links.pop()
        whole = "".join(self._out)
        label = whole[start:].strip()
        if not href or not label or label == href:
            return
        self._out = [whole[:start], f"[{label}]({href})"]

    def text(self) -> str:
        body = "".join(self._out)
        lines = [line.rstrip() for line in body.split("\n")]
        body = _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip()
        title = _SPACES.sub(" ", self.title).strip()
        headed = f"# {title}" in body.split("\n")
        return f"# {title}\n\n{body}" if title and not headed else body


def html_to_text(html: str, base_url: str = "") -> str:
    """The readable text of an HTML document (see the module doc); `base_url` resolves relative links."""
    reader = _Reader(base_url)
    reader.feed(html)
    reader.close()
    return reader.text()

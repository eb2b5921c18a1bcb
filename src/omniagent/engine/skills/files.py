"""Agent Skills on disk: where they live, and reading one `SKILL.md` (YAML front matter, then instructions).

A skill is a folder holding `SKILL.md`. Its front matter names it (`name`, else the folder's name) and says when to
use it (`description`, required); `argument-hint` and `disable-model-invocation` (Claude Code's fields) are read
too. Every other field (`license`, `metadata`, `allowed-tools`, …) is skipped without being interpreted.

The front matter is read by a small strict parser instead of a YAML library, because four string fields are all
the engine needs. What it accepts, for the fields it reads: a plain scalar on one line (a colon inside it is kept,
as many skill authors write `description: Use when: …`), continued on more-indented lines; a `'single'` or
`"double"` quoted string on one line; a `|` (literal) or `>` (folded) block scalar, read as YAML reads one: its
header may add an indentation digit and `-`/`+` chomping; a literal block keeps its lines, a folded one joins them
with spaces except across blank lines and around more-indented lines. Comment lines, blank lines and the values of
other fields (nested maps, lists, flow collections) are skipped. Anything else (a tab in the indentation, a line
that is not `key: value`, a field given twice, an anchor, alias or tag on a field it reads, a bad block header, a
block line less indented than its first) rejects the skill with a reason, which is logged, and discovery goes on.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from omniagent.errors import OmniagentError

log = logging.getLogger(__name__)

SKILL_FILE = "SKILL.md"
SKILLS_DIR = "skills"
SkillScope = Literal["project", "personal"]
# Folders under each scope's root that hold skills, in precedence order (the first of a name wins in a scope).
PROJECT_DIRS = (".omniagent", ".agents", ".claude")
MAX_SKILL_BYTES = 256 * 1024  # a SKILL.md larger than this is not read (the spec asks for < 5000 tokens)
MAX_SKILLS_PER_DIR = 500  # skill folders read per skills directory, so a huge tree cannot stall a session start
MAX_DESCRIPTION = 1024  # characters of a description kept (the spec's limit)
MAX_HINT = 256  # characters of an argument hint kept
# Skill names: what the spec allows (lowercase letters, digits, hyphens), plus `_` and `.` that other clients take.
_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?$")
_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)[ ]*:(?:[ ]+(.*))?$")
# A block scalar's header: the style, then an indentation digit and a chomping sign, each optional, in either order.
_BLOCK = re.compile(r"^([|>])(?:([1-9])?([+-])?|([+-])([1-9]))$")
_FIELDS = frozenset({"name", "description", "argument-hint", "disable-model-invocation"})
_DOUBLE_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "r": "\r", "0": "\0", " ": " "}


class SkillFormatError(OmniagentError):
    """A `SKILL.md` this engine cannot read; the message says which rule failed (never the file's text)."""


@dataclass(frozen=True, slots=True)
class Skill:
    """One discovered skill: its metadata, where it lives, and its instructions (the body after the front matter)."""

    name: str
    description: str
    scope: SkillScope
    argument_hint: str
    path: Path  # the SKILL.md
    body: str
    model_invocable: bool = True  # false with `disable-model-invocation: true`: only a user can run it

    @property
    def directory(self) -> Path:
        """The skill's folder, against which the relative paths in its instructions resolve."""
        return self.path.parent


def skill_roots(
    workspace: Path, config_dir: Path | None, home: Path, env: Mapping[str, str]
) -> list[tuple[Path, SkillScope]]:
    """Every skills directory of a workspace, project scope first, each scope in precedence order."""
    claude_home = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    roots: list[tuple[Path, SkillScope]] = [(workspace / d / SKILLS_DIR, "project") for d in PROJECT_DIRS]
    personal = [config_dir / SKILLS_DIR] if config_dir is not None else []
    personal += [home / ".agents" / SKILLS_DIR, claude_home / SKILLS_DIR]
    roots += [(path, "personal") for path in personal]
    return roots


def discover(roots: list[tuple[Path, SkillScope]]) -> list[Skill]:
    """Read the skills of `roots` (`<root>/<folder>/SKILL.md`), sorted by name. A name found twice keeps the first
    (the project's over the personal one); the shadowed one and every unreadable skill are logged and skipped."""
    found: dict[str, Skill] = {}
    for root, scope in roots:
        for path in _skill_files(root):
            try:
                skill = read_skill(path, scope)
            except (OSError, SkillFormatError) as exc:
                log.warning("skipped the skill in %s: %s", path.parent, _reason(exc))
                continue
            if skill.name in found:
                log.info("the skill %s in %s is shadowed by %s", skill.name, path.parent, found[skill.name].directory)
                continue
            found[skill.name] = skill
    return sorted(found.values(), key=lambda s: s.name)


def _reason(exc: Exception) -> str:
    return str(exc) if isinstance(exc, SkillFormatError) else "it cannot be read"


def _skill_files(root: Path) -> Iterator[Path]:
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:  # absent, or not a directory: no skills there
        return
    count = 0
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir():  # is_dir follows links: linked skills are common
            continue
        path = Path(entry.path) / SKILL_FILE
        if path.is_file():
            count += 1
            if count > MAX_SKILLS_PER_DIR:
                log.warning("%s holds more than %d skills; the rest are skipped", root, MAX_SKILLS_PER_DIR)
                return
            yield path


def read_skill(path: Path, scope: SkillScope) -> Skill:
    """One skill from its `SKILL.md`.

    Raises:
        OSError: the file cannot be read.
        SkillFormatError: the file is too large, not UTF-8, or its front matter is unreadable or incomplete.
    """
    if path.stat().st_size > MAX_SKILL_BYTES:
        raise SkillFormatError(f"{SKILL_FILE} is larger than {MAX_SKILL_BYTES} bytes")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise SkillFormatError(f"{SKILL_FILE} is not UTF-8 text") from None
    fields, body = parse_skill_md(text)
    name = fields.get("name") or path.parent.name
    if not _NAME.match(name):
        raise SkillFormatError("the name must be 1-64 lowercase letters, digits, '-', '_' or '.'")
    # The line breaks of a block description are the author's (a list of when to use the skill, say) and are kept;
    # those a block's chomping leaves at its end, and white space around it, mean nothing in one field.
    description = fields.get("description", "").strip()[:MAX_DESCRIPTION].rstrip()
    if not description:
        raise SkillFormatError("the description is missing")
    invocation = fields.get("disable-model-invocation", "false").lower()
    if invocation not in ("true", "false"):
        raise SkillFormatError("disable-model-invocation must be true or false")
    return Skill(
        name=name,
        description=description,
        scope=scope,
        argument_hint=" ".join(fields.get("argument-hint", "").split())[:MAX_HINT],
        path=path,
        body=body,
        model_invocable=invocation == "false",
    )


def parse_skill_md(text: str) -> tuple[dict[str, str], str]:
    """The front matter fields this engine reads (see the module doc) and the body, trimmed.

    Raises:
        SkillFormatError: no front matter, or one outside the accepted subset.
    """
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    if not lines or lines[0].rstrip() != "---":
        raise SkillFormatError(f"{SKILL_FILE} does not start with a --- front matter line")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if end is None:
        raise SkillFormatError("the front matter has no closing --- line")
    return _fields(lines[1:end]), "\n".join(lines[end + 1 :]).strip()


def _fields(lines: list[str]) -> dict[str, str]:
    fields: dict[str, str] = {}
    seen: set[str] = set()
    i = 0
    while i < len(lines):
        line = lines[i]
        _check_indent(line)
        if _skippable(line):
            i += 1
            continue
        if line[0] == " ":
            raise SkillFormatError(f"front matter line {i + 1} is indented but continues no field")
        match = _KEY.match(line.rstrip())
        if match is None:
            raise SkillFormatError(f"front matter line {i + 1} is not 'key: value'")
        key, value = match.group(1), (match.group(2) or "").strip()
        if key in seen:
            raise SkillFormatError(f"the field {key} is given twice")
        seen.add(key)
        continued = _continuation(lines, i + 1)
        if key in _FIELDS:
            fields[key] = _scalar(key, value, lines[i + 1 : continued])
        i = continued
    return fields


def _check_indent(line: str) -> None:
    if line[: len(line) - len(line.lstrip(" \t"))].count("\t"):
        raise SkillFormatError("the front matter is indented with a tab")


def _skippable(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _continuation(lines: list[str], start: int) -> int:
    """The index after the lines that belong to the field above (indented or blank lines; the blank lines before
    the next field are the field's too, as YAML's `|+` keeps them)."""
    end = start
    while end < len(lines) and (not lines[end].strip() or lines[end][0] == " "):
        _check_indent(lines[end])
        end += 1
    return end


def _scalar(key: str, value: str, more: list[str]) -> str:
    if value[:1] in ("&", "*", "!", "[", "{"):
        raise SkillFormatError(f"the field {key} is not a string this engine reads (anchor, alias, tag or collection)")
    if value[:1] in ("|", ">"):  # a block header; YAML allows no plain value starting with these either
        block = _BLOCK.match(value.split(" #", 1)[0].strip())
        if block is None:
            raise SkillFormatError(
                f"the field {key} has a block header this engine does not read "
                "(| or >, then optionally an indentation digit 1-9 and - or +)"
            )
        style, digit, chomping = block.group(1), block.group(2) or block.group(5), block.group(3) or block.group(4)
        return _block(key, style, int(digit) if digit else None, chomping or "", more)
    if value[:1] in ("'", '"'):
        if any(line.strip() for line in more):
            raise SkillFormatError(f"the quoted field {key} spans lines")
        return _quoted(key, value)
    plain = [value.split(" #", 1)[0].strip()]
    plain += [line.split(" #", 1)[0].strip() for line in more if line.strip() and not line.strip().startswith("#")]
    return " ".join(part for part in plain if part)


def _quoted(key: str, value: str) -> str:
    quote = value[0]
    closing = value.rfind(quote)
    rest = value[closing + 1 :].strip()
    if closing == 0 or (rest and not rest.startswith("#")):
        raise SkillFormatError(f"the field {key} has an unterminated quoted string")
    inner = value[1:closing]
    if quote == "'":
        if re.search(r"(?<!')'(?!')", inner.replace("''", "")):
            raise SkillFormatError(f"the field {key} has an unescaped ' in a single-quoted string")
        return inner.replace("''", "'")
    return _unescape_double(key, inner)


def _unescape_double(key: str, inner: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(inner):
        char = inner[i]
        if char == '"':
            raise SkillFormatError(f'the field {key} has an unescaped " in a double-quoted string')
        if char != "\\":
            out.append(char)
            i += 1
            continue
        code = inner[i + 1 : i + 2]
        if code in _DOUBLE_ESCAPES:
            out.append(_DOUBLE_ESCAPES[code])
            i += 2
        elif code == "u" and re.fullmatch(r"[0-9A-Fa-f]{4}", inner[i + 2 : i + 6]):
            out.append(json.loads(f'"\\u{inner[i + 2 : i + 6]}"'))
            i += 6
        else:
            raise SkillFormatError(f"the field {key} has an escape this engine does not read")
    return "".join(out)


def _block(key: str, style: str, indent: int | None, chomping: str, more: list[str]) -> str:
    """A block scalar's value from its lines, as YAML reads it: the indentation is the header's digit, else the
    first line with text's; a blank line no longer than it is an empty line, a longer one keeps its extra spaces."""
    if indent is None:
        # The first text's indentation; a blank line above it that is deeper sets it instead (so the text is less
        # indented and refused, as YAML refuses it), and a block without text takes its deepest blank line's.
        start = next((n for n, line in enumerate(more) if line.strip()), len(more))
        leading = [len(line) for line in more[:start]]
        if start < len(more):
            leading.append(len(more[start]) - len(more[start].lstrip(" ")))
        indent = max(leading, default=0)
    less = f"the block of the field {key} has a line less indented than its first line"
    texts: list[str | None] = []  # each line's text after the indentation; None for an empty line
    for number, line in enumerate(more):
        if not line.strip():
            texts.append(line[indent:] if len(line) > indent else None)
        elif len(line) - len(line.lstrip(" ")) >= indent:
            texts.append(line[indent:])
        elif line.lstrip().startswith("#") and all(not r.strip() or r.lstrip().startswith("#") for r in more[number:]):
            break  # comments less indented than the block end it
        else:
            raise SkillFormatError(less)
    last = max((n for n, text in enumerate(texts) if text is not None), default=-1)
    body, trailing = texts[: last + 1], len(texts) - last - 1
    text = "\n".join(t or "" for t in body) if style == "|" else _fold(body)
    if chomping == "-":
        return text
    ending = "\n" if body else ""
    return text + ending + ("\n" * trailing if chomping == "+" else "")


def _fold(lines: list[str | None]) -> str:
    """YAML's line folding of a `>` block's lines (None for an empty line): a line break between two lines of text
    becomes a space, or, with empty lines between them, one newline per empty line; the breaks around a
    more-indented line (one that starts with white space) are kept, as are the empty lines before the first."""
    out: list[str] = []
    previous: str | None = None
    empty = 0
    for line in lines:
        if line is None:
            empty += 1
            continue
        if previous is None:
            out.append("\n" * empty)
        elif previous[:1] in (" ", "\t") or line[:1] in (" ", "\t"):
            out.append("\n" * (empty + 1))
        else:
            out.append("\n" * empty if empty else " ")
        out.append(line)
        previous, empty = line, 0
    return "".join(out)

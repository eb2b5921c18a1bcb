"""Hypothesis strategies for hostile input lines, and a blocking line-pipe harness for the stdio faces.

Every `undecodable` line is, by construction, not a JSON value any face may accept (invalid UTF-8, a lone surrogate
escape, nesting past the limit, an id out of range, NaN/Infinity, a truncated object, a raw NUL), so each face
must answer it with its wire's "unknown id" error. `wrong_shape` lines are JSON but not a call (and never a
notification or a response), so each face must answer them with one error line too. `out_of_range` lines are the
template's request with a number out of range in its params: JSON all the same, so each face answers it with the
request's id where its wire takes that id (issue 26).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from omniagent.wire.decode import MAX_DEPTH

WAIT = 10.0  # seconds: the bound on waiting for one reply line under load

# A request every face could take, with one slot made hostile; the other slots stay well-formed.
_SLOTS = ("ID", "METHOD", "KEY", "VALUE")
_TEMPLATE = b'{"jsonrpc":"2.0","id":ID,"cmd":"info","session":"s","method":METHOD,"params":{KEY:VALUE}}'
_NORMAL = {"ID": b"7", "METHOD": b'"initialize"', "KEY": b'"protocolVersion"', "VALUE": b"1"}
_BAD_UTF8 = (b"\xff", b"\x80", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\xe2\x82", b"\xf4\x90\x80\x80")
_TEXT = st.text(alphabet=st.characters(codec="ascii", exclude_characters='"\\\n\r'), max_size=12)


def _fill(slot: str, hostile: bytes) -> bytes:
    out = _TEMPLATE
    for name, normal in _NORMAL.items():
        out = out.replace(name.encode(), hostile if name == slot else normal)
    return out


@st.composite
def _in_slot(
    draw: st.DrawFn, hostile: st.SearchStrategy[bytes], *, string: bool, slots: tuple[str, ...] = ("ID", "VALUE")
) -> bytes:
    """`hostile` in one slot of the template: any slot for string content (quoted), else one of `slots`."""
    if string:
        return _fill(draw(st.sampled_from(_SLOTS)), b'"' + draw(hostile) + b'"')
    return _fill(draw(st.sampled_from(slots)), draw(hostile))


@st.composite
def _invalid_utf8(draw: st.DrawFn) -> bytes:
    return draw(_TEXT).encode() + draw(st.sampled_from(_BAD_UTF8)) + draw(_TEXT).encode()


@st.composite
def _lone_surrogate(draw: st.DrawFn) -> bytes:
    high = draw(st.integers(0xD800, 0xDBFF))
    low = draw(st.integers(0xDC00, 0xDFFF))
    escape = draw(
        st.sampled_from(
            [f"\\u{high:04x}", f"\\u{low:04X}", f"\\u{low:04x}\\u{high:04x}", f"\\u{high:04x}x", f"x\\u{low:04x}"]
        )
    )
    return (draw(_TEXT) + escape + draw(_TEXT)).encode()


@st.composite
def _deep(draw: st.DrawFn) -> bytes:
    depth = draw(st.integers(MAX_DEPTH + 1, 5000))
    opener, closer = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}"), (b'[{"b":', b"}]")]))
    return opener * depth + b"0" + closer * depth


@st.composite
def _huge_number(draw: st.DrawFn) -> bytes:
    sign = draw(st.sampled_from([b"", b"-"]))
    kind = draw(st.sampled_from(["int", "exp", "digits"]))
    if kind == "int":  # just past u64, up to far past Python's 4300-digit limit
        digits = draw(st.integers(21, 5000))
        return sign + b"9" * digits
    if kind == "exp":
        return sign + b"1e" + str(draw(st.integers(309, 10**6))).encode()
    return sign + b"1" + b"0" * draw(st.integers(400, 2000)) + b".5e999"


def _non_finite() -> st.SearchStrategy[bytes]:
    return st.sampled_from([b"NaN", b"Infinity", b"-Infinity", b"nan", b"inf"])


@st.composite
def _truncated(draw: st.DrawFn) -> bytes:
    whole = _fill("ID", b"7")
    return whole[: draw(st.integers(1, len(whole) - 1))]


@st.composite
def _nul_junk(draw: st.DrawFn) -> bytes:
    # A raw NUL is never valid JSON text, inside a string or out.
    junk = draw(st.binary(max_size=64)).replace(b"\n", b"").replace(b"\r", b"")
    return b"{" + junk + b"\x00" + draw(st.binary(max_size=8)).replace(b"\n", b"")


def undecodable() -> st.SearchStrategy[bytes]:
    """One line no face may decode."""
    return st.one_of(
        _in_slot(_invalid_utf8(), string=True),
        _in_slot(_lone_surrogate(), string=True),
        _in_slot(_deep(), string=False),
        _deep(),
        _in_slot(_huge_number(), string=False, slots=("ID",)),
        _in_slot(_non_finite(), string=False),
        _truncated(),
        _nul_junk(),
    )


_RESERVED = {"method", "result", "error", "cmd", "jsonrpc"}
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64) + 1, 2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)


def _json_values() -> st.SearchStrategy[Any]:
    keys = st.text(max_size=8).filter(lambda k: k not in _RESERVED)
    return st.recursive(
        _SCALARS,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
        max_leaves=12,
    )


def wrong_shape() -> st.SearchStrategy[bytes]:
    """One JSON line that is not a call: a scalar, an array, or an object with no method (and no result/error)."""
    return _json_values().map(lambda value: json.dumps(value, ensure_ascii=False).encode())


def out_of_range() -> st.SearchStrategy[bytes]:
    """The template's request (id 7) with a number out of range as its one param's value."""
    return _in_slot(_huge_number(), string=False, slots=("VALUE",))


def batches(min_size: int, max_size: int) -> st.SearchStrategy[list[tuple[str, bytes]]]:
    """A batch of hostile lines, each tagged `undecodable`, `shape` or `out_of_range` (one line in 16, about as
    many as when these lines counted as undecodable)."""
    tagged = {
        "undecodable": undecodable().map(lambda b: ("undecodable", b)),
        "shape": wrong_shape().map(lambda b: ("shape", b)),
        "out_of_range": out_of_range().map(lambda b: ("out_of_range", b)),
    }
    common = st.one_of(tagged["undecodable"], tagged["shape"])
    line = st.integers(0, 15).flatmap(lambda n: tagged["out_of_range"] if n == 0 else common)
    return st.lists(line, min_size=min_size, max_size=max_size)


class LinePipe:
    """A face's subprocess with blocking pipes; a thread reads stdout into a queue of raw lines."""

    def __init__(self, argv: Sequence[str], env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr = bytearray()
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := self.proc.stderr.read(65536):
            self.stderr += chunk

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def close_input(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def next_line(self) -> Any:
        """The next stdout line as JSON; fails if none comes within `WAIT` or stdout ended (the process died)."""
        try:
            raw = self._lines.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError(
                f"no line within {WAIT}s; stderr: {self.stderr[-2000:].decode(errors='replace')}"
            ) from None
        if raw is None:
            raise AssertionError(f"stdout ended; stderr: {self.stderr[-2000:].decode(errors='replace')}")
        return json.loads(raw)  # a traceback or any other text on stdout fails here

    def end(self) -> int:
        """Close stdin, drain stdout, and return the exit code (bounded)."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=WAIT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()

"""The one decoding path for untrusted lines: what it refuses, what it keeps, and that it raises nothing else."""

from __future__ import annotations

import contextlib
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omniagent.wire.decode import MAX_DEPTH, BadJson, NumberOutOfRange, decode_line


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"\xff", "invalid UTF-8"),
        (b'{"id":"\\ud800"}', "lone surrogate"),
        (b'{"\\udc00":1}', "lone surrogate"),
        (b'["\\udc00\\ud800"]', "lone surrogate"),
        (b"[" * 100_000, "nested deeper"),
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), "nested deeper"),
        (b'{"a":NaN}', "NaN"),
        (b"-Infinity", "Infinity"),
        (b"1e400", "out of range"),
        (b"18446744073709551616", "out of range"),
        (b"-18446744073709551616", "out of range"),
        (b"9" * 5000, "digits"),
        (b"", "Expecting value"),
        (b'{"a":1', "delimiter"),
    ],
)
def test_hostile_lines_are_refused_with_a_reason(line: bytes, reason: str) -> None:
    with pytest.raises(BadJson) as caught:
        decode_line(line)
    assert reason in caught.value.reason


@pytest.mark.parametrize(
    ("line", "value"),
    [
        (b'"\\ud83d\\ude00"', "\U0001f600"),  # a proper surrogate pair is one character
        (b"18446744073709551615", 2**64 - 1),
        (b"-1.5e308", -1.5e308),
        (b"[[[]]]", [[[]]]),
        ('{"é":"ü"}'.encode(), {"é": "ü"}),
    ],
)
def test_good_json_is_kept(line: bytes, value: object) -> None:
    assert decode_line(line) == value


@pytest.mark.parametrize(
    ("line", "value"),
    [
        (b'{"id":"r1","n":18446744073709551616}', {"id": "r1", "n": 2**64}),
        (b'{"id":7,"n":[-1e400]}', {"id": 7, "n": [-math.inf]}),
        (b'{"id":7,"n":' + b"9" * 5000 + b"}", {"id": 7, "n": math.inf}),  # past Python's own digit limit
        (b'{"id":18446744073709551616}', {"id": 2**64}),
    ],
)
def test_a_number_out_of_range_keeps_the_rest_of_the_line_readable(line: bytes, value: object) -> None:
    """Issue 26: the line is refused, but it is JSON: the error carries it decoded, for the request's id."""
    with pytest.raises(NumberOutOfRange) as caught:
        decode_line(line)
    assert "out of range" in caught.value.reason or "digits" in caught.value.reason
    assert caught.value.value == value


@pytest.mark.parametrize(
    "line",
    [
        b'{"id":1,"n":1e400,"m":NaN}',
        b'{"id":1,"n":1e400',
        b'{"id":"\\ud800","n":1e400}',
        b"[" * 200 + b"1e400" + b"]" * 200,
    ],
)
def test_a_number_out_of_range_beside_another_fault_is_just_bad_json(line: bytes) -> None:
    with pytest.raises(BadJson) as caught:
        decode_line(line)
    assert not isinstance(caught.value, NumberOutOfRange)


def test_nesting_at_the_limit_is_kept() -> None:
    value = decode_line(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH)
    depth = 0
    while isinstance(value, list):
        depth += 1
        value = value[0] if value else None
    assert depth == MAX_DEPTH


@settings(max_examples=300, derandomize=True, database=None)
@given(st.binary(max_size=200))
def test_any_bytes_decode_or_raise_bad_json_only(line: bytes) -> None:
    with contextlib.suppress(BadJson):
        decode_line(line)


def test_a_client_relaying_an_agent_repairs_lone_surrogates_instead_of_refusing_the_line() -> None:
    line = b'{"text":["cut \\ud83d","\\ud83d\\ude00"],"\\udc00k":1}'
    assert decode_line(line, repair_surrogates=True) == {"text": ["cut \ufffd", "\U0001f600"], "\ufffdk": 1}

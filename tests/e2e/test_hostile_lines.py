"""No line kills a server: each stdio face (`serve`, `rpc`, `acp`) as a real subprocess against generated hostile lines.

Per face: ≥ 1,000 hypothesis-generated bad lines (seeded: `derandomize`), in batches; every line gets exactly one
reply in the wire's error shape, every stdout line is the wire's JSON (a traceback would fail to parse), and after
each batch the process answers a valid request. Plus a 50 MB line, a request followed at once by EOF, and requests
holding a number out of range (answered with their own id).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from tests.e2e.hostile_lines import LinePipe, batches
from tests.engine.rpc_harness import check_line
from tests.sidecar_schema import validate_line

LINES_PER_FACE = 1000
BATCHES = 20  # of at least 50 lines each
_FUZZ = settings(
    max_examples=BATCHES,
    derandomize=True,  # the same lines on every run and machine
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)


@dataclass(frozen=True)
class Face:
    """One stdio face: how to start it, its valid probe request, and what its replies must look like."""

    name: str
    argv: Callable[[Path], list[str]]
    probe: Callable[[int], bytes]
    is_probe_answer: Callable[[Any, int], bool]
    unknown_id_error: Callable[[Any], bool]  # the reply to a line that is not JSON
    any_error: Callable[[Any], bool]  # the reply to JSON that is not a call
    check: Callable[[Any], None]  # the wire's own validation of any output line
    greeting: int  # lines written before any input (serve's hello)
    # A valid request but for one number out of range (`NUMBER`, put in by the test), and the reply it must get:
    # the wire's error for bad params, with the request's own id.
    out_of_range: bytes
    is_out_of_range_answer: Callable[[Any], bool]
    # The reply to the fuzz's `out_of_range` lines (the template's request, id 7, a number out of range in params).
    template_out_of_range_error: Callable[[Any], bool]


def _omniagent(*args: str) -> list[str]:
    return [sys.executable, "-m", "omniagent", *args]


def _rpc_error(line: Any, ids: tuple[object, ...] = ("",)) -> bool:
    return isinstance(line, dict) and line.get("id") in ids and line.get("error", {}).get("code") == -32602


def _acp_error(line: Any) -> bool:
    if isinstance(line, list):
        return bool(line) and all(_acp_error(item) for item in line)
    error = line.get("error") if isinstance(line, dict) else None
    return (
        line.get("jsonrpc") == "2.0"
        and isinstance(error, dict)
        and error.get("code") in (-32700, -32600)
        and isinstance(error.get("message"), str)
    )


def _acp_invalid_params(line: Any, request_id: object) -> bool:
    return (
        isinstance(line, dict)
        and line.get("jsonrpc") == "2.0"
        and line.get("id") == request_id
        and line.get("error", {}).get("code") == -32602
    )


def _acp_check(line: Any) -> None:
    items = line if isinstance(line, list) else [line]
    for item in items:
        assert isinstance(item, dict) and item.get("jsonrpc") == "2.0", line
        if "error" in item:
            assert isinstance(item["error"]["code"], int) and isinstance(item["error"]["message"], str), line


def _sidecar_error(line: Any) -> bool:
    return isinstance(line, dict) and "error" in line and line["error"].get("kind") == "BadFrame"


FACES = [
    Face(
        name="serve",
        argv=lambda _data: _omniagent("serve"),
        probe=lambda n: json.dumps({"id": 10**9 + n, "cmd": "discover"}).encode(),
        is_probe_answer=lambda line, n: line.get("id") == 10**9 + n and "ok" in line,
        unknown_id_error=lambda line: _sidecar_error(line) and line["id"] is None,
        any_error=_sidecar_error,
        check=validate_line,
        greeting=1,
        out_of_range=b'{"id":4242,"cmd":"rollback","session":"s1","turns":NUMBER}',
        is_out_of_range_answer=lambda line: _sidecar_error(line) and line["id"] == 4242,
        template_out_of_range_error=lambda line: _sidecar_error(line) and line["id"] == 7,
    ),
    Face(
        name="rpc",
        argv=lambda data: _omniagent("rpc", "--data-dir", str(data)),
        probe=lambda n: json.dumps({"id": f"probe-{n}", "method": "initialize"}).encode(),
        is_probe_answer=lambda line, n: line.get("id") == f"probe-{n}" and "result" in line,
        unknown_id_error=_rpc_error,
        any_error=_rpc_error,
        check=lambda line: check_line(line, {line.get("id"): "initialize"} if "result" in line else {}),
        greeting=0,
        out_of_range=(
            b'{"id":"r1","method":"session.rewind",'
            b'"params":{"session_id":"0123456789abcdef0123456789abcdef","before_message_id":NUMBER}}'
        ),
        is_out_of_range_answer=lambda line: _rpc_error(line, ("r1",)),
        template_out_of_range_error=_rpc_error,  # yuke ids are strings: 7 is no id, so it gets ""
    ),
    Face(
        name="acp",
        argv=lambda data: _omniagent("acp", "--data-dir", str(data)),
        probe=lambda n: json.dumps(
            {"jsonrpc": "2.0", "id": f"probe-{n}", "method": "initialize", "params": {"protocolVersion": 1}}
        ).encode(),
        is_probe_answer=lambda line, n: isinstance(line, dict) and line.get("id") == f"probe-{n}" and "result" in line,
        unknown_id_error=lambda line: (
            isinstance(line, dict) and _acp_error(line) and line["id"] is None and line["error"]["code"] == -32700
        ),
        any_error=_acp_error,
        check=_acp_check,
        greeting=0,
        out_of_range=b'{"jsonrpc":"2.0","id":"r1","method":"initialize","params":{"protocolVersion":NUMBER}}',
        is_out_of_range_answer=lambda line: _acp_invalid_params(line, "r1"),
        template_out_of_range_error=lambda line: _acp_invalid_params(line, 7),
    ),
]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["OMNIAGENT_LOG"] = "ERROR"
    return env


def _start(face: Face, tmp_path: Path) -> LinePipe:
    pipe = LinePipe(face.argv(tmp_path / "data"), _env(), tmp_path)
    for _ in range(face.greeting):
        face.check(pipe.next_line())
    return pipe


def _probe(pipe: LinePipe, face: Face, n: int) -> None:
    pipe.write(face.probe(n) + b"\n")
    line = pipe.next_line()
    face.check(line)
    assert face.is_probe_answer(line, n), line


@pytest.mark.parametrize("face", FACES, ids=lambda f: f.name)
def test_every_hostile_line_is_answered_and_the_face_goes_on(face: Face, tmp_path: Path) -> None:
    pipe = _start(face, tmp_path)
    sent = {"undecodable": 0, "shape": 0, "out_of_range": 0}
    try:
        _probe(pipe, face, 0)

        @_FUZZ
        @given(batch=batches(min_size=LINES_PER_FACE // BATCHES, max_size=LINES_PER_FACE // BATCHES + 10))
        def one_batch(batch: list[tuple[str, bytes]]) -> None:
            probe_number = sum(sent.values()) + 1
            pipe.write(b"".join(line + b"\n" for _, line in batch) + face.probe(probe_number) + b"\n")
            # Replies may come out of order on `serve` (commands run concurrently): match by shape, not position.
            expected = [kind for kind, _ in batch]
            probe_seen = False
            while expected or not probe_seen:
                line = pipe.next_line()
                face.check(line)
                if not probe_seen and face.is_probe_answer(line, probe_number):
                    probe_seen = True
                    continue
                if face.template_out_of_range_error(line) and "out_of_range" in expected:
                    expected.remove("out_of_range")
                    continue
                kind = "undecodable" if face.unknown_id_error(line) and "undecodable" in expected else "shape"
                assert face.any_error(line), f"not an error reply: {line}"
                assert kind in expected, f"more replies than lines: {line}"
                expected.remove(kind)
            for kind, _ in batch:
                sent[kind] += 1

        one_batch()
        assert sum(sent.values()) >= LINES_PER_FACE, sent
        assert sent["undecodable"] > LINES_PER_FACE // 3, sent
        assert sent["out_of_range"] > 0, sent
        _probe(pipe, face, 0)
    finally:
        code = pipe.end()
    assert code == 0, pipe.stderr.decode(errors="replace")[-2000:]


@pytest.mark.parametrize("face", FACES, ids=lambda f: f.name)
def test_a_50_mb_line_is_refused_and_the_next_request_answered(face: Face, tmp_path: Path) -> None:
    pipe = _start(face, tmp_path)
    try:
        huge = b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"' + b"a" * (50 * 1024 * 1024) + b'"}}'
        pipe.write(huge + b"\n" + face.probe(1) + b"\n")
        refusal = pipe.next_line()
        face.check(refusal)
        assert face.any_error(refusal) and refusal["id"] in (None, ""), refusal
        answer = pipe.next_line()
        face.check(answer)
        assert face.is_probe_answer(answer, 1), answer
    finally:
        assert pipe.end() == 0


@pytest.mark.parametrize("newline", [b"\n", b""], ids=["newline", "no-newline"])
@pytest.mark.parametrize("face", FACES, ids=lambda f: f.name)
def test_a_request_followed_by_eof_is_answered_before_exit(face: Face, newline: bytes, tmp_path: Path) -> None:
    """`echo '<request>' | omniagent <face>` prints the reply, then exits 0."""
    pipe = _start(face, tmp_path)
    pipe.write(b"[" * 3000 + b"\n" + face.probe(1) + newline)
    pipe.close_input()
    refusal = pipe.next_line()
    face.check(refusal)
    assert face.unknown_id_error(refusal), refusal
    answer = pipe.next_line()
    face.check(answer)
    assert face.is_probe_answer(answer, 1), answer
    assert pipe.end() == 0


# Past u64 either way, a float that overflows, and an integer past Python's own digit limit: each is valid JSON.
OUT_OF_RANGE = [b"18446744073709551616", b"-18446744073709551616", b"1e400", b"9" * 5000]


@pytest.mark.parametrize("face", FACES, ids=lambda f: f.name)
def test_a_number_out_of_range_is_answered_with_the_request_id_and_nothing_is_lost(face: Face, tmp_path: Path) -> None:
    """Issue 26: a request holding a number no peer can represent is answered with its own id and the wire's error
    for bad params (not the anonymous parse error), as the first line (the faces' early path) and later, and the next
    request on the connection is answered as usual."""
    pipe = _start(face, tmp_path)
    try:
        for n, number in enumerate(OUT_OF_RANGE, start=1):
            pipe.write(face.out_of_range.replace(b"NUMBER", number) + b"\n")
            refusal = pipe.next_line()
            face.check(refusal)
            assert face.is_out_of_range_answer(refusal), (number[:30], refusal)
            _probe(pipe, face, n)
    finally:
        code = pipe.end()
    assert code == 0, pipe.stderr.decode(errors="replace")[-2000:]

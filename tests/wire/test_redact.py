"""`wire/redact.py`: what of another program's words may go into our messages (issue 26)."""

from __future__ import annotations

from omniagent.wire.redact import MASK, clip, named_secrets, redact


def test_known_secrets_and_key_shaped_words_are_masked_and_escapes_dropped() -> None:
    text = "\x1b[31mkey sk-ant-api03-abcdefgh1234 and AIzaSyA1234567890abcdefghijk, bearer: Bearer tok.en-12345678"
    said = redact(text + " and hunter2-secret-value", ["hunter2-secret-value", "short"])
    assert said == f"key {MASK} and {MASK}, bearer: Bearer {MASK} and {MASK}"
    # An escape inside a known secret cannot split it past the mask.
    assert redact("x hunter2-\x1b[0msecret-value y", ["hunter2-secret-value"]) == f"x {MASK} y"
    assert redact("a short word, a path /usr/bin and line\nbreaks\tstay", ["short"]) == (
        "a short word, a path /usr/bin and line\nbreaks\tstay"
    )


def test_named_secrets_are_the_values_of_secret_named_entries_and_their_words() -> None:
    values = {
        "ANTHROPIC_API_KEY": "sk-ant-0123456789",
        "authorization": "Bearer tok-0123456789",
        "GH_TOKEN": "tiny",
        "HOME": "/home/someone",
    }
    assert named_secrets(values) == ["sk-ant-0123456789", "Bearer tok-0123456789", "tok-0123456789"]


def test_clip_keeps_the_start_or_the_end_and_marks_the_cut() -> None:
    assert clip("abcdef", 6) == "abcdef"
    assert clip("abcdefgh", 6) == "abcde…" and clip("abcdefgh", 6, keep_end=True) == "…defgh"

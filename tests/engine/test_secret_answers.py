"""Masking secret answers (`engine/interactions/secrets.py`): whole texts, tool results with their view hints, and live
output that arrives in pieces, where a secret may be split across two of them."""

from __future__ import annotations

import base64
import urllib.parse

from omniagent.engine.interactions.secrets import MASK, Scrubber, Secrets
from omniagent.engine.tools import ToolResult
from omniagent.engine.tools.views import DiffFile, DiffHunk, DiffView, TextView

SID = "a" * 32


def test_a_secret_split_across_pieces_is_held_back_and_masked_whole() -> None:
    stream = Scrubber(["s3cr3t"]).stream()
    assert stream.feed("token: s3") == "token: "  # "s3" could start the secret
    assert stream.feed("cr3t, done") == f"{MASK}, done"
    assert stream.feed("s3c") == ""
    assert stream.feed("ret") == "s3cre"  # not the secret after all; "t" could begin it reversed ("t3rc3s")
    assert stream.feed("ail s") == "tail "
    assert stream.flush() == "s"


def test_results_are_masked_in_their_output_and_every_text_of_their_views() -> None:
    scrubber = Scrubber(["hunter2", ""])
    diff = DiffView(files=(DiffFile(path="a", hunks=(DiffHunk(1, 1, 1, 1, ("-x=hunter2", "+y=hunter2")),)),))
    masked = scrubber.result(ToolResult("pw hunter2", views=(TextView("hunter2"), diff)))
    assert masked.output == f"pw {MASK}"
    assert masked.views[0] == TextView(MASK)
    assert isinstance(masked.views[1], DiffView)
    assert masked.views[1].files[0].hunks[0].lines == (f"-x={MASK}", f"+y={MASK}")
    assert scrubber.holds(b"the hunter2 file") and not scrubber.holds(b"nothing")
    assert not Scrubber([""])  # an empty answer is nothing to mask


def test_each_session_keeps_its_own_secrets_as_variables_until_forgotten() -> None:
    secrets = Secrets()
    assert secrets.keep(SID, 4, "v4") == "OMNIAGENT_SECRET_4"
    secrets.keep("b" * 32, 5, "other")
    assert secrets.env(SID, ("OMNIAGENT_SECRET_4",)) == (("OMNIAGENT_SECRET_4", "v4"),)
    assert secrets.env(SID, ("OMNIAGENT_SECRET_5",)) == ()  # another session's
    assert secrets.scrubber(SID).text("v4 other") == f"{MASK} other"
    secrets.forget(SID)
    assert secrets.env(SID, ("OMNIAGENT_SECRET_4",)) == () and not secrets.scrubber(SID)


def test_a_command_may_get_only_the_secrets_its_command_line_names() -> None:
    """Issue 22 hole 3: the variables a command names, in the order named, and only the session's own."""
    secrets = Secrets()
    secrets.keep(SID, 4, "v4")
    secrets.keep(SID, 12, "v12")
    named = 'git push "https://x:${OMNIAGENT_SECRET_12}@h"; echo $OMNIAGENT_SECRET_4 $OMNIAGENT_SECRET_12'
    named += " $OMNIAGENT_SECRET_9"
    assert secrets.named_in(SID, named) == ("OMNIAGENT_SECRET_12", "OMNIAGENT_SECRET_4")
    assert secrets.named_in(SID, "env | base64; cat /proc/self/environ") == ()
    assert secrets.named_in(SID, "echo $OMNIAGENT_SECRET_1") == ()  # 1 is not one of its answers
    # A name built at run time is not a name: the command gets nothing, so there is nothing to read.
    assert secrets.named_in(SID, 'eval "echo \\$OMNIAGENT_""SECRET_4"') == ()


def test_the_common_encodings_of_a_secret_are_masked_too() -> None:
    """Issue 22 hole 3, the second line of defence: base64 (both alphabets, each alignment inside longer data), hex
    (plain, upper, byte by byte as od prints it), reversed and percent-encoded forms are masked like the secret."""
    secret = "hunter2-Sesame/7c1d?"
    raw = secret.encode()
    scrubber = Scrubber([secret])
    encodings = [
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode(),
        base64.b64encode(b"TOKEN=" + raw + b"\n").decode(),
        base64.b64encode(b"x" + raw).decode(),
        base64.b64encode(b"xy" + raw).decode(),
        raw.hex(),
        raw.hex().upper(),
        raw.hex(" "),
        secret[::-1],
        urllib.parse.quote(secret, safe=""),
    ]
    for encoded in encodings:
        masked = scrubber.text(f"before {encoded} after")
        assert MASK in masked, encoded
        # What is masked is at least as long as the secret: only the characters mixing in neighbouring bytes stay.
        removed = len(f"before {encoded} after") - len(masked.replace(MASK, ""))
        assert removed >= len(secret), (encoded, masked)
    assert scrubber.text("an ordinary line") == "an ordinary line"
    assert Scrubber(["ab1"]).text("1ba ab1 616231") == f"1ba {MASK} 616231"  # too short to mask its encodings

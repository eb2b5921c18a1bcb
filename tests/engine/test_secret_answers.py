"""Masking secret answers (`engine/interactions/secrets.py`): whole texts, tool results with their view hints, and live
output that arrives in pieces, where a secret may be split across two of them."""

from __future__ import annotations

from omniagent.engine.interactions.secrets import MASK, Scrubber, Secrets
from omniagent.engine.tools import ToolResult
from omniagent.engine.tools.views import DiffFile, DiffHunk, DiffView, TextView

SID = "a" * 32


def test_a_secret_split_across_pieces_is_held_back_and_masked_whole() -> None:
    stream = Scrubber(["s3cr3t"]).stream()
    assert stream.feed("token: s3") == "token: "  # "s3" could start the secret
    assert stream.feed("cr3t, done") == f"{MASK}, done"
    assert stream.feed("s3c") == ""
    assert stream.feed("ret") == "s3cret"  # not the secret after all
    assert stream.feed("tail s") == "tail "
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
    assert secrets.env(SID) == (("OMNIAGENT_SECRET_4", "v4"),)
    assert secrets.scrubber(SID).text("v4 other") == f"{MASK} other"
    secrets.forget(SID)
    assert secrets.env(SID) == () and not secrets.scrubber(SID)

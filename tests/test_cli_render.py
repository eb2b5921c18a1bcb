"""`omniagent run` into a pipe draws without rich (issue 11): `PlainScreen` writes exactly what rich writes to a file
that is not a terminal, for every kind of text the renderers and the asker draw; and such a run imports no rich."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from omniagent.faces.cli.render import PlainScreen, RichScreen, Styled

SAMPLES = [
    Styled("Hello, world!"),
    Styled("The user wants a greeting.", style="dim italic"),
    Styled.assemble(("● ", "green"), ("Write hello.txt", "bold"), "  hello.txt", ("  completed", "green")),
    Styled("col\ta\tbc\td\n\tindented\n", style="dim"),
    Styled("bell\x07 cr\r back\x08 form\x0c vtab\x0b end"),
    Styled("    … 3 more lines\n", style="dim italic").append("    last line", style="dim"),
    Styled("é ü ß 中文 😀 (no tab after wide characters)"),
    Styled("[bold]not markup[/bold] :smile: \x1b[31mescape"),
    Styled(""),
]


@pytest.mark.parametrize("end", ["\n", ""])
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: repr(s.plain[:20]))
def test_the_plain_screen_writes_what_rich_writes_to_a_file(sample: Styled, end: str) -> None:
    drawn_by_rich, plain = io.StringIO(), io.StringIO()
    RichScreen(Console(file=drawn_by_rich, highlight=False, soft_wrap=True)).print(sample, end=end)
    PlainScreen(plain).print(sample, end=end)
    assert plain.getvalue() == drawn_by_rich.getvalue()


def test_an_empty_print_is_one_newline_on_both() -> None:
    drawn_by_rich, plain = io.StringIO(), io.StringIO()
    RichScreen(Console(file=drawn_by_rich, highlight=False, soft_wrap=True)).print()
    PlainScreen(plain).print()
    assert plain.getvalue() == drawn_by_rich.getvalue() == "\n"


def test_a_run_into_a_pipe_imports_no_rich(tmp_path: Path) -> None:
    script = Path(__file__).parent / "fixtures" / "mock-scripts" / "run-hello.json"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "omniagent", "run", "--mock", str(script), "say hello"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "Hello, world!"
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "omniagent.faces.cli.render" in imported and "rich" not in imported

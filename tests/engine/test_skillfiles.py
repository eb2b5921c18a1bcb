"""Reading `SKILL.md` files and finding skills (engine/skills/files.py): the accepted front matter subset, the
refusals, the locations and their precedence."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniagent.engine.skills.files import SkillFormatError, discover, parse_skill_md, read_skill, skill_roots


def _skill(root: Path, folder: str, front: str, body: str = "Do the thing.") -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}---\n{body}\n")
    return path


def test_plain_quoted_and_block_values_are_read_and_other_fields_are_skipped() -> None:
    text = (
        "---\n"
        "# a comment\n"
        "name: pdf-tools\n"
        "description: Use when: the user asks about PDFs # not part of it\n"
        "  and forms, too\n"
        "argument-hint: '[file] [pages]'\n"
        "license: Apache-2.0\n"
        "metadata:\n"
        "  author: someone\n"
        '  version: "1.0"\n'
        "allowed-tools: [read, exec]\n"
        "---\n\n"
        "# PDF\nSteps.\n"
    )
    fields, body = parse_skill_md(text)
    assert fields == {
        "name": "pdf-tools",
        "description": "Use when: the user asks about PDFs and forms, too",
        "argument-hint": "[file] [pages]",
    }
    assert body == "# PDF\nSteps."


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('"say \\"hi\\"\\n\\u00e9"', 'say "hi"\né'),
        ("'it''s'", "it's"),
        ("|\n  one\n  two", "one\ntwo\n"),
        (">-\n  one\n  two\n\n  three", "one two\nthree"),
    ],
)
def test_scalar_forms(value: str, expected: str) -> None:
    fields, _ = parse_skill_md(f"---\ndescription: {value}\n---\n")
    assert fields["description"] == expected


# Block scalars as YAML reads them (each expected value is what a YAML 1.2 parser gives for the same text). The
# field after the block shows where the block ends: the blank lines before it belong to the block (`|+` keeps them).
@pytest.mark.parametrize(
    ("block", "expected"),
    [
        # literal: the lines keep their breaks, less the first line's indentation; clip keeps one final newline
        (
            "|\n  Review code.\n  Use when:\n    - the user asks\n\n  Then report.\n",
            "Review code.\nUse when:\n  - the user asks\n\nThen report.\n",
        ),
        ("|-\n  one\n  two\n\n", "one\ntwo"),
        ("|+\n  one\n  two\n\n\n", "one\ntwo\n\n\n"),
        ("|\n\n  one\n", "\none\n"),
        ("|\n  a\n    \n  b\n", "a\n  \nb\n"),
        ("|\n  # not a comment\n  two\n", "# not a comment\ntwo\n"),
        ("| # a comment\n  one\n", "one\n"),
        ("|2\n    code\n  text\n", "  code\ntext\n"),
        ("|\n", ""),
        ("|+\n\n", "\n"),
        # folded: lines join with a space, a blank line is a newline, more-indented lines keep their breaks
        (">\n  one\n  two\n", "one two\n"),
        (">\n  one\n  two\n\n  three\n\n\n  four\n", "one two\nthree\n\nfour\n"),
        (">\n  Use when:\n    - a\n    - b\n  and then\n  more\n", "Use when:\n  - a\n  - b\nand then more\n"),
        (">\n  a\n\n    b\n\n  c\n", "a\n\n  b\n\nc\n"),
        (">\n\n  one\n  two\n", "\none two\n"),
        (">-\n  one\n  two\n\n", "one two"),
        (">+\n  one\n  two\n\n", "one two\n\n"),
        (">1-\n  a\n b\n", " a\nb"),
        (">-1\n  a\n b\n", " a\nb"),
        (">\n  one\n # a trailing comment\n", "one\n"),
        # YAML's own example of folding (spec 1.2, example 8.10)
        (
            ">\n\n folded\n line\n\n next\n line\n   * bullet\n\n   * list\n   * lines\n\n last\n line\n\n# Comment\n",
            "\nfolded line\nnext line\n  * bullet\n\n  * list\n  * lines\n\nlast line\n",
        ),
    ],
)
def test_block_scalars_keep_or_fold_lines_as_yaml_does(block: str, expected: str) -> None:
    fields, _ = parse_skill_md(f"---\ndescription: {block}name: x\n---\n")
    assert fields == {"description": expected, "name": "x"}


@pytest.mark.parametrize(
    ("block", "reason"),
    [
        ("|x\n  one\n", "block header"),
        ("|++\n  one\n", "block header"),
        (">-+\n  one\n", "block header"),
        ("|0\n  one\n", "block header"),
        ("|#c\n  one\n", "block header"),
        ("> one\n", "block header"),
        ("|\n    one\n  two\n", "less indented"),
        ("|\n    \n  one\n", "less indented"),
        ("|2\n one\n", "less indented"),
    ],
)
def test_a_bad_block_header_or_indentation_is_refused(block: str, reason: str) -> None:
    with pytest.raises(SkillFormatError, match=reason):
        parse_skill_md(f"---\ndescription: {block}---\nbody\n")


def test_a_description_keeps_its_line_breaks_and_loses_its_trailing_ones(tmp_path: Path) -> None:
    """A `|` description keeps its lines, a `>` one is folded, a plain one spanning lines is one line; the final
    newline a block's chomping leaves is dropped, as white space around the description is."""
    literal = "description: |\n  Review code.\n  Use when:\n    - the user asks\n"
    assert read_skill(_skill(tmp_path, "a", literal), "project").description == (
        "Review code.\nUse when:\n  - the user asks"
    )
    folded = "description: >+\n  Review\n  code.\n\n  Then report.\n\n"
    assert read_skill(_skill(tmp_path, "b", folded), "project").description == "Review code.\nThen report."
    plain = "description: Review\n  code.\n"
    assert read_skill(_skill(tmp_path, "c", plain), "project").description == "Review code."


@pytest.mark.parametrize(
    ("front", "reason"),
    [
        ("name: a\nname: b\n", "given twice"),
        ("\tname: a\n", "tab"),
        ("just words\n", "not 'key: value'"),
        ("description: *alias\n", "anchor, alias"),
        ("description: 'open\n", "unterminated"),
        ('description: "bad \\q"\n', "escape"),
        ("  description: x\n", "indented"),
    ],
)
def test_front_matter_outside_the_subset_is_refused_with_a_reason(front: str, reason: str) -> None:
    with pytest.raises(SkillFormatError, match=reason):
        parse_skill_md(f"---\n{front}---\nbody\n")


def test_a_file_without_front_matter_or_description_or_with_a_bad_name_is_refused(tmp_path: Path) -> None:
    no_front = tmp_path / "a" / "SKILL.md"
    no_front.parent.mkdir()
    no_front.write_text("# Just markdown\n")
    with pytest.raises(SkillFormatError, match="front matter"):
        read_skill(no_front, "project")
    with pytest.raises(SkillFormatError, match="description"):
        read_skill(_skill(tmp_path, "b", "name: b\n"), "project")
    with pytest.raises(SkillFormatError, match="name"):
        read_skill(_skill(tmp_path, "c", "name: Has Spaces\ndescription: x\n"), "project")


def test_the_name_defaults_to_the_folder_and_the_hint_and_invocation_flag_are_read(tmp_path: Path) -> None:
    path = _skill(tmp_path, "deploy", "description: Ship it.\nargument-hint: <env>\ndisable-model-invocation: true\n")
    skill = read_skill(path, "personal")
    assert (skill.name, skill.description, skill.argument_hint, skill.scope) == (
        "deploy",
        "Ship it.",
        "<env>",
        "personal",
    )
    assert not skill.model_invocable and skill.body == "Do the thing." and skill.directory == path.parent


def test_locations_precedence_and_bad_skills_skipped(tmp_path: Path) -> None:
    """Project scope first (.omniagent, .agents, .claude), then personal (config dir, ~/.agents, Claude Code's
    dir, CLAUDE_CONFIG_DIR when set); a name found twice keeps the first; a broken skill is skipped."""
    workspace, home, config, claude = (tmp_path / p for p in ("ws", "home", "config", "claude-config"))
    _skill(workspace / ".agents" / "skills", "review", "description: project review\n")
    _skill(workspace / ".claude" / "skills", "review", "description: shadowed review\n")
    _skill(workspace / ".claude" / "skills", "broken", "name: broken\n")
    _skill(home / ".agents" / "skills", "review", "description: personal review\n")
    _skill(config / "skills", "notes", "description: personal notes\n")
    _skill(claude / "skills", "commit", "description: from CLAUDE_CONFIG_DIR\n")
    _skill(home / ".claude" / "skills", "ignored", "description: not read when CLAUDE_CONFIG_DIR is set\n")
    (workspace / ".agents" / "skills" / "README.md").write_text("not a skill\n")
    roots = skill_roots(workspace, config, home, {"CLAUDE_CONFIG_DIR": str(claude)})
    found = {s.name: (s.description, s.scope) for s in discover(roots)}
    assert found == {
        "commit": ("from CLAUDE_CONFIG_DIR", "personal"),
        "notes": ("personal notes", "personal"),
        "review": ("project review", "project"),
    }

"""What the model sees of skills: the catalog section of the system prompt, the `skill` tool that loads one, and
the text a skill run by the user (`Input.skill`) becomes.

Progressive disclosure, as the Agent Skills guide describes it: the system prompt lists each skill the model may
use (name and description, about a hundred tokens each); the model loads a skill's instructions with the `skill`
tool when a task matches it. A session without such skills gets neither the section nor the tool. The instructions
name the skill's folder, since the relative paths in them resolve against it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from xml.sax.saxutils import escape, quoteattr

from omniagent.engine.skills.catalog import SkillCatalog
from omniagent.engine.skills.files import Skill
from omniagent.engine.tools import ToolContext, ToolRegistry, ToolResult
from omniagent.engine.tools.views import MarkdownView

SKILL_TOOL = "skill"
ARGUMENTS_PLACEHOLDER = "$ARGUMENTS"  # replaced by the arguments in a skill's instructions (Claude Code's convention)
_SECTION_INTRO = (
    "# Skills\n"
    "Skills are instructions for specific tasks. When a task matches a skill's description, call the `skill` tool "
    "with the skill's name before you start on it, and follow the instructions it returns."
)


def system_prompt(base: str, catalog: SkillCatalog) -> str:
    """`base` followed by the catalog section, when the session has skills the model may use."""
    usable = catalog.model_invocable()
    if not usable:
        return base
    listed = "\n".join(
        f"<skill><name>{escape(s.name)}</name><description>{escape(s.description)}</description></skill>"
        for s in usable
    )
    return f"{base}\n\n{_SECTION_INTRO}\n<available_skills>\n{listed}\n</available_skills>"


def tools_for(tools: ToolRegistry, catalog: SkillCatalog) -> ToolRegistry:
    """The session's tools: `tools`, plus the `skill` tool when the session has skills the model may use."""
    usable = catalog.model_invocable()
    return ToolRegistry([*tools, SkillTool(usable)]) if usable else tools


def instructions(skill: Skill, arguments: str) -> str:
    """A skill's instructions for the model, with its arguments: `$ARGUMENTS` replaced where the instructions
    use it, else appended after them."""
    body = skill.body
    if ARGUMENTS_PLACEHOLDER in body:
        body = body.replace(ARGUMENTS_PLACEHOLDER, arguments)
    elif arguments:
        body = f"{body}\n\nARGUMENTS: {arguments}"
    return (
        f"<skill name={quoteattr(skill.name)} directory={quoteattr(str(skill.directory))}>\n{body}\n</skill>\n"
        "Relative paths in the skill's instructions are relative to its directory."
    )


def invocation(skill: Skill, arguments: str) -> str:
    """The user message a skill run by the user (`Input.skill`) becomes: the command line as the user would type
    it (which is also what the session's title takes), then the instructions."""
    command = f"/{skill.name} {arguments}".rstrip()
    return f"{command}\n\n{instructions(skill, arguments)}"


class SkillTool:
    """Load one of the session's skills by name: its instructions become the call's result."""

    name = SKILL_TOOL
    description = (
        "Load the instructions of a skill listed in the system prompt under # Skills. Call it before starting on a "
        "task that matches the skill's description, then follow the instructions it returns."
    )

    def __init__(self, skills: Sequence[Skill]) -> None:
        self._skills = {skill.name: skill for skill in skills}
        self.input_schema: Mapping[str, object] = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": list(self._skills), "description": "The skill's name."},
                "arguments": {"type": "string", "description": "What the skill should work on, if anything."},
            },
            "required": ["name"],
            "additionalProperties": False,
        }

    async def run(self, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        name, arguments = args.get("name"), args.get("arguments", "")
        if not isinstance(name, str) or not isinstance(arguments, str):
            return ToolResult.error("`name` and `arguments` must be strings")
        skill = self._skills.get(name)
        if skill is None:
            return ToolResult.error(f"there is no skill named {name!r}; the skills are: {', '.join(self._skills)}")
        text = instructions(skill, arguments)
        return ToolResult(output=text, views=(MarkdownView(text=skill.body),))

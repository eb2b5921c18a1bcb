"""The skills of each session: discovered once when the session starts in this process, then fixed for its life.

What it is: the engine part that answers "which skills does this session have" for every face: the run loop (the
catalog in the system prompt, the `skill` tool), `Input.skill` (the instructions a user runs), the `skills.list`
extension method, ACP's available commands and the runtime's slash commands. A session starts in a process when
it is created there, or when it is first used there (resumed, listed, run). Keeping the catalog fixed keeps the
system prompt and tools of a session stable, so a provider's prompt cache still fits; a skill added later shows in
sessions started after it.
What it is not: the file format and locations (`files.py`) or what the model reads (`prompt.py`).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from omniagent.engine.errors import EngineError
from omniagent.engine.skills import files as skill_files
from omniagent.engine.skills.files import Skill
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.content import SkillInfo, SkillRef
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.ids import SessionId

SKILLS_LIST_METHOD = "skills.list"
# A slash command as a user types it in a prompt: `/name`, then its arguments after white space.
_COMMAND = re.compile(r"/(\S+)(?:\s+(.*))?", re.DOTALL)


class SkillsListParams(YukeModel):
    """Params of `skills.list` (engine extension): the session whose skills to list."""

    session_id: SessionId


class SkillCatalog:
    """The skills of one session, by name, in name order."""

    def __init__(self, skills: list[Skill]) -> None:
        self._skills = {skill.name: skill for skill in skills}

    def __iter__(self) -> Iterator[Skill]:
        return iter(self._skills.values())

    def __len__(self) -> int:
        return len(self._skills)

    def get(self, name: str) -> Skill | None:
        """The skill called `name`, or None."""
        return self._skills.get(name)

    def require(self, name: str) -> Skill:
        """The skill called `name`; unknown_skill when the session has none by that name."""
        skill = self._skills.get(name)
        if skill is None:
            raise EngineError(ErrorCode.UNKNOWN_SKILL, "unknown skill")
        return skill

    def command(self, text: str) -> SkillRef | None:
        """A prompt that is a `/name arguments` command naming one of these skills, as the skill it runs (the
        faces with slash commands, ACP and the runtime's, send it as an `Input.skill`); None for any other text."""
        match = _COMMAND.fullmatch(text.strip())
        if match is None or match.group(1) not in self._skills:
            return None
        return SkillRef(name=match.group(1), arguments=(match.group(2) or "").strip())

    def model_invocable(self) -> list[Skill]:
        """The skills the model may load itself (the others only a user runs)."""
        return [s for s in self._skills.values() if s.model_invocable]

    def infos(self) -> list[SkillInfo]:
        """The catalog as the wire lists it (`skills.list`): each description as its author broke its lines."""
        return [
            SkillInfo(name=s.name, description=s.description, scope=s.scope, argument_hint=s.argument_hint)
            for s in self._skills.values()
        ]

    def commands(self) -> list[SkillInfo]:
        """The catalog as slash commands (ACP's available commands, the runtime's slash commands): each description
        on one line, since a command menu shows one line per command. All of its text, not its first line, which
        is often only a lead-in ("Use when:") to the lines after it."""
        return [
            SkillInfo(
                name=s.name, description=" ".join(s.description.split()), scope=s.scope, argument_hint=s.argument_hint
            )
            for s in self._skills.values()
        ]


class Skills:
    """Per-session skill catalogs of one engine. `config_dir` holds the personal `skills/` folder of omniagent;
    `home` and `env` locate the shared ones (`~/.agents/skills`, Claude Code's). `Skills.none()` finds nothing."""

    def __init__(self, config_dir: Path | None, home: Path | None = None, env: Mapping[str, str] | None = None) -> None:
        self._config_dir = config_dir
        self._home = home
        self._env = os.environ if env is None else env
        self._enabled = True
        self._catalogs: dict[str, SkillCatalog] = {}

    @classmethod
    def none(cls) -> Skills:
        """A part that discovers no skill (unit tests of other parts)."""
        skills = cls(None)
        skills._enabled = False
        return skills

    async def catalog(self, session_id: str, root: str) -> SkillCatalog:
        """The skills of a session in workspace `root`: discovered on the first call, the same ones after."""
        found = self._catalogs.get(session_id)
        if found is None:
            skills = await asyncio.to_thread(self._discover, Path(root)) if self._enabled else []
            found = self._catalogs.setdefault(session_id, SkillCatalog(skills))
        return found

    def known(self, session_id: str) -> SkillCatalog:
        """The catalog of a session that started in this process (empty before it did)."""
        return self._catalogs.get(session_id) or SkillCatalog([])

    def forget(self, session_id: str) -> None:
        """Drop a removed session's catalog."""
        self._catalogs.pop(session_id, None)

    def _discover(self, root: Path) -> list[Skill]:
        home = self._home or Path.home()
        return skill_files.discover(skill_files.skill_roots(root, self._config_dir, home, self._env))

"""How a batch answers an agent's requests without a person: the task's permission policy, and no questions.

- `deny`: every permission is denied (the agent may go on without the tool).
- `{"allow": [...]}`: a permission whose tool name, kind or title is listed is allowed once; the rest denied.
- `auto`: every permission is allowed, only where the agent's commands run sandboxed (its session's `sandbox`
  option holds a sandboxed value: our engine's `sandboxed`, its default on Linux; Codex's `read-only` or
  `workspace-write`) or with the explicit `allow_unsandboxed` flag (`--allow-unsandboxed-auto`).
"""

from __future__ import annotations

from omniagent.batch.tasks import AllowTools, Permissions
from omniagent.protocols.sidecar.agents import SessionInfo
from omniagent.protocols.sidecar.commands import Answer, PermissionAnswer, QuestionsAnswer, TextAnswer
from omniagent.protocols.sidecar.events import PermissionAsk, PermissionChoice, QuestionAsk, Request, ToolUpdate

_SANDBOX_OPTION = "sandbox"
# Values of a session's `sandbox` option that confine the agent's commands (anything else, or none, does not):
# our engine's exec sandbox, and Codex's two sandboxed modes. Listed, not guessed: an unknown value is unsandboxed.
SANDBOXED_VALUES = frozenset({"sandboxed", "read-only", "workspace-write"})


def sandboxed(info: SessionInfo) -> bool:
    """Whether the session says its commands run in a sandbox (its `sandbox` option holds a sandboxed value)."""
    value = info.configuration.options.get(_SANDBOX_OPTION)
    return value is True or (isinstance(value, str) and value in SANDBOXED_VALUES)


def auto_refusal(info: SessionInfo, *, allow_unsandboxed: bool) -> str | None:
    """Why `auto` may not be used for this session, or None when it may."""
    if allow_unsandboxed or sandboxed(info):
        return None
    value = info.configuration.options.get(_SANDBOX_OPTION)
    why = f"its `sandbox` option is {value!r}" if value is not None else "it reports no sandbox"
    return (
        f"permissions `auto` needs an agent whose commands run sandboxed, and {info.agent.id} does not ({why}); "
        'use `deny` or `{"allow": [...]}`, or pass --allow-unsandboxed-auto to approve its tools anyway'
    )


def answer(request: Request, permissions: Permissions) -> Answer | None:
    """The answer to an agent's request, or None when a batch cannot answer it (the turn is then cancelled)."""
    if isinstance(request, PermissionAsk):
        allowed = permissions == "auto" or (
            isinstance(permissions, AllowTools) and _listed(request.request.tool, permissions.allow)
        )
        wanted = (
            (PermissionChoice.ALLOW_ONCE, PermissionChoice.ALLOW_ALWAYS)
            if allowed
            else (PermissionChoice.DENY_ONCE, PermissionChoice.DENY_ALWAYS)
        )
        choice = next((c for c in wanted if c in request.request.options), None)
        return PermissionAnswer(choice=choice) if choice is not None else None
    if isinstance(request, QuestionAsk) and all(q.allows_free_text for q in request.request.questions):
        answers: list[TextAnswer] = [TextAnswer(text="") for _ in request.request.questions]
        return QuestionsAnswer(answers=list(answers))
    return None


def _listed(tool: ToolUpdate, names: list[str]) -> bool:
    wanted = {name.lower() for name in names}
    candidates = {tool.kind.TAG.lower(), tool.title.lower()}
    if tool.raw is not None:
        candidates.add(tool.raw.name.lower())
    return bool(wanted & candidates)

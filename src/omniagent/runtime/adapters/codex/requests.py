"""Codex app-server requests to the client → typed requests, and the caller's answers → the wire's results.

- `item/commandExecution/requestApproval`, `item/fileChange/requestApproval` → Permission. AllowOnce, AllowAlways
  and DenyOnce are always offered: the server takes `accept`, `acceptForSession` and `decline` whatever its
  `availableDecisions` lists (0.171.0 lists `accept`, an exec-policy amendment and `cancel`).
- `item/tool/requestUserInput` → Question; choice ids are the option labels, `isOther` allows free text.
- Anything else is not ours to answer: the adapter refuses it and says so in a Warning.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omniagent.protocols.sidecar.commands import (
    Answer,
    ChoicesAnswer,
    PermissionAnswer,
    QuestionsAnswer,
)
from omniagent.protocols.sidecar.events import (
    Choice,
    CommandInput,
    CommandSpec,
    Edit,
    Execute,
    PermissionAsk,
    PermissionChoice,
    PermissionRequest,
    Question,
    QuestionAsk,
    QuestionRequest,
    RequestOpened,
    ToolStatus,
    ToolUpdate,
)
from omniagent.runtime.adapters.codex.translate import ThreadTranslator

COMMAND_APPROVAL = "item/commandExecution/requestApproval"
FILE_APPROVAL = "item/fileChange/requestApproval"
USER_INPUT = "item/tool/requestUserInput"
HANDLED = frozenset({COMMAND_APPROVAL, FILE_APPROVAL, USER_INPUT})
# Every request the app-server may send us (0.171.0 schema); the ones this module does not handle are refused.
SERVER_REQUESTS = (
    "item/commandExecution/requestApproval",
    "item/fileChange/requestApproval",
    "item/tool/requestUserInput",
    "mcpServer/elicitation/request",
    "item/permissions/requestApproval",
    "item/tool/call",
    "account/chatgptAuthTokens/refresh",
    "attestation/generate",
    "applyPatchApproval",
    "execCommandApproval",
)
# Every permission ask offers these; the answers below are valid for both approval kinds.
PERMISSION_CHOICES = [PermissionChoice.ALLOW_ONCE, PermissionChoice.ALLOW_ALWAYS, PermissionChoice.DENY_ONCE]
_DECISIONS = {
    PermissionChoice.ALLOW_ONCE: "accept",
    PermissionChoice.ALLOW_ALWAYS: "acceptForSession",
    PermissionChoice.DENY_ONCE: "decline",
    PermissionChoice.DENY_ALWAYS: "decline",
}


def opened(method: str, request_id: str, params: Mapping[str, Any], threads: ThreadTranslator) -> RequestOpened:
    """The typed request for one of the HANDLED methods."""
    if method == USER_INPUT:
        return RequestOpened(request=QuestionAsk(request=QuestionRequest(id=request_id, questions=_questions(params))))
    tool = _tool(method, request_id, params, threads)
    reason = params.get("reason")
    request = PermissionRequest(
        id=request_id,
        tool=tool,
        options=list(PERMISSION_CHOICES),
        detail=reason if isinstance(reason, str) and reason else None,
    )
    return RequestOpened(request=PermissionAsk(request=request))


def answer_result(method: str, answer: Answer | None, params: Mapping[str, Any]) -> dict[str, Any]:
    """The wire result for the caller's answer; None means the turn was cancelled."""
    if method == USER_INPUT:
        if not isinstance(answer, QuestionsAnswer):
            return {"answers": {}}
        questions = params.get("questions") or []
        answers: dict[str, Any] = {}
        for question, reply in zip(questions, answer.answers, strict=False):
            if not isinstance(question, Mapping) or not isinstance(question.get("id"), str):
                continue
            chosen = list(reply.ids) if isinstance(reply, ChoicesAnswer) else [reply.text]
            answers[question["id"]] = {"answers": chosen}
        return {"answers": answers}
    if not isinstance(answer, PermissionAnswer):
        return {"decision": "cancel"}
    return {"decision": _DECISIONS[answer.choice]}


def _tool(method: str, request_id: str, params: Mapping[str, Any], threads: ThreadTranslator) -> ToolUpdate:
    """The tool the approval is about: its snapshot when its item was seen, else one built from the request."""
    item_id = str(params.get("itemId") or request_id)
    known = threads.tool(item_id)
    if known is not None:
        return known
    if method == COMMAND_APPROVAL:
        command, cwd = params.get("command"), params.get("cwd")
        text = command if isinstance(command, str) else "command"
        update = ToolUpdate(
            id=item_id,
            kind=Execute(),
            title=text,
            status=ToolStatus.PENDING,
            input=CommandInput(spec=CommandSpec(command=text, cwd=cwd if isinstance(cwd, str) else None)),
        )
    else:
        update = ToolUpdate(id=item_id, kind=Edit(), title="edit files", status=ToolStatus.PENDING)
    threads.remember_tool(update)
    return update


def _questions(params: Mapping[str, Any]) -> list[Question]:
    questions: list[Question] = []
    for raw in params.get("questions") or []:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("id"), str):
            continue
        options = raw.get("options")
        labels = [str(o["label"]) for o in options or [] if isinstance(o, Mapping) and isinstance(o.get("label"), str)]
        header = raw.get("header")
        questions.append(
            Question(
                id=raw["id"],
                text=str(raw.get("question") or ""),
                header=header if isinstance(header, str) and header else None,
                choices=[Choice(id=label, label=label) for label in labels],
                multi_select=False,
                # A question without options can only be answered in words.
                allows_free_text=raw.get("isOther") is True or not labels,
            )
        )
    return questions

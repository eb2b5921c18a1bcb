"""The `ask_user` tool: the model puts one question to the user (yes/no, a choice, or free text) and reads the answer as
the tool's result. The question goes out through `ToolContext.ask` (engine/interactions/questions.py broadcasts it);
this module only reads the arguments and says what the answer was."""

from __future__ import annotations

from collections.abc import Mapping

from omniagent.engine.tools.args import optional_bool, optional_str, required_str
from omniagent.engine.tools.context import (
    Answered,
    CannotAsk,
    Dismissed,
    Question,
    SecretKept,
    ToolContext,
    ToolError,
    ToolResult,
    guarded,
)

__all__ = ["AskUserTool"]

# Options a select may offer: enough for any real choice, few enough to show in one dialog.
MAX_OPTIONS = 20
KINDS = ("confirm", "select", "input")


class AskUserTool:
    """Ask the user a question and wait for the answer."""

    name = "ask_user"
    description = (
        "Ask the user one question and wait for the answer: `confirm` (yes or no), `select` (one of `options`) or "
        "`input` (free text). Ask only when you cannot proceed well without the user's decision or information. "
        "For a password, token or other secret, use `input` with `secret: true`: you will not see the value; "
        "an `exec` command that names the environment variable the result tells you gets it, once the user "
        "approves that command."
    )
    input_schema: Mapping[str, object] = {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": list(KINDS), "description": "The kind of answer wanted."},
            "question": {"type": "string", "description": "The question, short."},
            "detail": {"type": "string", "description": "confirm: what exactly the user agrees to."},
            "options": {
                "type": "array",
                "items": {"type": "string"},
                "description": f"select: the choices, 2 to {MAX_OPTIONS}.",
            },
            "placeholder": {"type": "string", "description": "input: an example of the expected answer."},
            "secret": {"type": "boolean", "description": "input: the answer is a secret you must not see."},
        },
        "required": ["kind", "question"],
        "additionalProperties": False,
    }

    async def run(self, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        """Ask and wait; bad arguments, a dismissed question or no frontend to ask give an error result."""

        async def body() -> ToolResult:
            question = _question(args)
            answer = await ctx.ask(question)
            if isinstance(answer, CannotAsk):
                raise ToolError(answer.reason)
            if isinstance(answer, Dismissed):
                raise ToolError("the user dismissed the question without answering")
            if isinstance(answer, SecretKept):
                return ToolResult(
                    f"The user entered the secret. You cannot see it, and it is never stored. An `exec` command "
                    f"that names ${answer.env} in its command line gets it as that environment variable (until the "
                    "engine stops) once the user approves that command; other commands do not have it. "
                    "Never print it."
                )
            return ToolResult(_said(question, answer))

        return await guarded(ctx.root, body)


def _question(args: Mapping[str, object]) -> Question:
    kind = required_str(args, "kind")
    if kind == "confirm":
        return Question("confirm", required_str(args, "question"), detail=optional_str(args, "detail") or "")
    if kind == "select":
        options = args.get("options")
        if not isinstance(options, list) or not all(isinstance(o, str) and o for o in options):
            raise ToolError("the argument 'options' must be a list of non-empty strings")
        unique = tuple(dict.fromkeys(str(o) for o in options))
        if not 2 <= len(unique) <= MAX_OPTIONS:
            raise ToolError(f"a select needs 2 to {MAX_OPTIONS} different options")
        return Question("select", required_str(args, "question"), options=unique)
    if kind == "input":
        return Question(
            "input",
            required_str(args, "question"),
            placeholder=optional_str(args, "placeholder"),
            secret=optional_bool(args, "secret", default=False),
        )
    raise ToolError(f"the argument 'kind' must be one of: {', '.join(KINDS)}")


def _said(question: Question, answer: Answered) -> str:
    if question.kind == "confirm":
        return "The user answered yes." if answer.value is True else "The user answered no."
    if question.kind == "select":
        return f"The user chose: {answer.value}"
    return f"The user answered: {answer.value}"

"""What a Codex app-server session looks like to the runtime: login state from `account/read`, the version from
`initialize`, the model catalogue from `model/list`, options, capabilities and slash commands.

Options:
- `model` and `effort` are live: they ride every `turn/start` (the server applies them "for this turn and
  subsequent turns"), so a change costs no round trip and cannot be refused later than the next turn;
- `mode` (the approval policy) and `sandbox` are creation-only: they go into `thread/start` / `resume` / `fork`.

Creation values are checked against `model/list` before the thread exists: the wire would take an unknown model
and fail the first turn with a provider 400. `CodexState` holds it all and builds the `DriverInfo`. No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from omniagent.protocols.sidecar.agents import (
    AccountInfo,
    AgentDetails,
    ApiKey,
    Authenticated,
    AuthStatus,
    AuthUnknown,
    Capabilities,
    Capability,
    CloudProvider,
    ConfigChoice,
    ConfigOption,
    ConfigValue,
    LoginMethod,
    McpTransport,
    OtherAuth,
    SelectKind,
    SessionConfiguration,
    SlashCommand,
    Subscription,
    Unauthenticated,
    ordered_features,
)
from omniagent.runtime import driver as d

MODEL = "model"
EFFORT = "effort"
MODE = "mode"
SANDBOX = "sandbox"
# The approval policies `thread/start` takes (0.171.0 refuses `untrusted` in config.toml, not on the wire).
APPROVAL_POLICIES: tuple[tuple[str, str], ...] = (
    ("untrusted", "Ask before any command that is not known to be safe"),
    ("on-request", "Ask when the model requests to leave the sandbox"),
    ("never", "Never ask"),
)
SANDBOX_MODES: tuple[tuple[str, str], ...] = (
    ("read-only", "Read only"),
    ("workspace-write", "Write in the workspace"),
    ("danger-full-access", "Full access (no sandbox)"),
)
# The thread result's sandbox `type` → the mode name `thread/start` takes.
_SANDBOX_TYPES = {
    "readOnly": "read-only",
    "workspaceWrite": "workspace-write",
    "dangerFullAccess": "danger-full-access",
}
# What the app-server always offers, whatever the login. Not Questions: 0.171.0 gives the model
# `request_user_input` only in the Plan collaboration mode (an experimental API this adapter does not select); a
# question that arrives anyway is still asked.
_ALWAYS = frozenset(
    {
        Capability.IMAGES,
        Capability.RESUME,
        Capability.STEER,
        Capability.PERMISSIONS,
        Capability.ROLLBACK,
        Capability.FORK,
        Capability.COMPACT,
        Capability.SLASH_COMMANDS,
        Capability.PLAN,
        Capability.SUBAGENTS,
        Capability.CONTEXT_USAGE,
    }
)
_CLOUD_ACCOUNTS = frozenset({"amazonBedrock", "gcp"})


@dataclass(frozen=True, slots=True)
class Model:
    """One `model/list` entry: its id, name, whether the picker shows it, and its reasoning efforts."""

    id: str
    name: str
    hidden: bool
    efforts: tuple[str, ...]
    default_effort: str | None
    is_default: bool


def parse_models(entries: Sequence[Any]) -> list[Model]:
    """`model/list` `data` entries as `Model`s (malformed entries dropped)."""
    models: list[Model] = []
    for entry in entries:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("id"), str):
            continue
        efforts = tuple(
            str(item["reasoningEffort"])
            for item in entry.get("supportedReasoningEfforts") or []
            if isinstance(item, Mapping) and isinstance(item.get("reasoningEffort"), str)
        )
        default = entry.get("defaultReasoningEffort")
        models.append(
            Model(
                id=entry["id"],
                name=str(entry.get("displayName") or entry["id"]),
                hidden=entry.get("hidden") is True,
                efforts=efforts,
                default_effort=default if isinstance(default, str) else None,
                is_default=entry.get("isDefault") is True,
            )
        )
    return models


def agent_version(user_agent: Any) -> str | None:
    """The CLI version in `initialize`'s `userAgent` ("omniagent/0.171.0 (Debian …)" → "0.171.0")."""
    if not isinstance(user_agent, str) or "/" not in user_agent:
        return None
    version = user_agent.split("/", 1)[1].split(" ", 1)[0]
    return version or None


def auth_status(account_read: Mapping[str, Any], logins: list[LoginMethod]) -> AuthStatus:
    """`account/read` as an auth status. No account but `requiresOpenaiAuth: false` is a custom model provider
    that needs no OpenAI login (its key comes from the provider's own env var): not a missing login."""
    account = account_read.get("account")
    if isinstance(account, Mapping):
        kind = account.get("type")
        if kind == "chatgpt":
            email, plan = account.get("email"), account.get("planType")
            info = AccountInfo(
                email=email if isinstance(email, str) else None, plan=plan if isinstance(plan, str) else None
            )
            return Authenticated(kind=Subscription(), account=info)
        if kind == "apiKey":
            return Authenticated(kind=ApiKey())
        if kind in _CLOUD_ACCOUNTS:
            return Authenticated(kind=CloudProvider())
        return Authenticated(kind=OtherAuth(name=str(kind)))
    if account_read.get("requiresOpenaiAuth") is False:
        return AuthUnknown()
    return Unauthenticated(login=logins)


@dataclass(slots=True)
class CodexState:
    """One Codex session as the runtime describes it; `info()` is the `DriverInfo` the loop sees."""

    version: str | None = None
    auth: AuthStatus = field(default_factory=AuthUnknown)
    models: list[Model] = field(default_factory=list)
    thread_id: str = ""
    title: str | None = None
    model: str | None = None
    effort: str | None = None
    mode: str | None = None
    sandbox: str | None = None
    commands: list[SlashCommand] = field(default_factory=list)
    skills: dict[str, str] = field(default_factory=dict)  # skill name → its path (what a `skill` input names)

    def info(self) -> d.DriverInfo:
        features = set(_ALWAYS)
        if isinstance(self.auth, Authenticated) and isinstance(self.auth.kind, Subscription):
            features.add(Capability.PLAN_USAGE)  # only a ChatGPT plan has quota windows
        options = self.options()
        details = AgentDetails(
            version=self.version,
            auth=self.auth,
            # Stdio MCP servers ride `thread/start` as a config override; HTTP/SSE were not seen to work that way.
            capabilities=Capabilities(features=ordered_features(features), mcp_transports=[McpTransport.STDIO]),
            config_options=options,
            commands=list(self.commands),
        )
        current = {option.id: option.current for option in options if option.current is not None}
        return d.DriverInfo(
            details=details,
            configuration=SessionConfiguration(options=current),
            resume_token=self.thread_id or None,
            title=self.title,
            deterministic_turn_end=True,  # exactly one `turn/completed` per turn, even interrupted
            deterministic_agent_turn_end=True,
        )

    def options(self) -> list[ConfigOption]:
        listed = [m for m in self.models if not m.hidden or m.id == self.model]
        choices = [ConfigChoice(value=m.id, label=m.name) for m in listed]
        if self.model is not None and all(c.value != self.model for c in choices):
            choices.append(ConfigChoice(value=self.model, label=self.model))  # a model the catalogue lacks
        options = [_select(MODEL, "Model", "model", choices, self.model, live=True)]
        efforts = self.efforts()
        if efforts:
            effort_choices = [ConfigChoice(value=e, label=e) for e in efforts]
            options.append(_select(EFFORT, "Reasoning effort", "thought_level", effort_choices, self.effort, True))
        options.append(_select(MODE, "Approval policy", "mode", _pairs(APPROVAL_POLICIES), self.mode, live=False))
        options.append(_select(SANDBOX, "Sandbox", "other", _pairs(SANDBOX_MODES), self.sandbox, live=False))
        return options

    def efforts(self) -> tuple[str, ...]:
        model = self.find_model(self.model)
        return model.efforts if model is not None else ()

    def find_model(self, model_id: str | None) -> Model | None:
        return next((m for m in self.models if m.id == model_id), None)

    def default_model(self) -> Model | None:
        return next((m for m in self.models if m.is_default), self.models[0] if self.models else None)

    def apply_thread(self, result: Mapping[str, Any]) -> None:
        """A `thread/start`, `thread/resume` or `thread/fork` result: thread id, title and the settings in force."""
        thread = result.get("thread")
        if isinstance(thread, Mapping):
            self.thread_id = str(thread.get("id") or self.thread_id)
            name = thread.get("name")
            self.title = name if isinstance(name, str) else self.title
        model = result.get("model")
        if isinstance(model, str):
            self.model = model
        effort = result.get("reasoningEffort")
        if isinstance(effort, str):
            self.effort = effort
        elif self.effort is None:
            known = self.find_model(self.model)
            self.effort = known.default_effort if known is not None else None
        policy = result.get("approvalPolicy")
        self.mode = policy if isinstance(policy, str) else None  # a granular policy has no name among ours
        sandbox = result.get("sandbox")
        kind = sandbox.get("type") if isinstance(sandbox, Mapping) else None
        self.sandbox = _SANDBOX_TYPES.get(kind) if isinstance(kind, str) else None

    def apply_value(self, option: str, value: ConfigValue) -> None:
        """A live option the loop validated: it takes effect with the next `turn/start`."""
        if option == MODEL:
            self.model = str(value)
            if self.effort is not None and self.effort not in self.efforts():
                known = self.find_model(self.model)
                self.effort = known.default_effort if known is not None else None
        elif option == EFFORT:
            self.effort = str(value)

    def apply_skills(self, result: Any) -> bool:
        """`skills/list` as slash commands, deduplicated by name; whether they changed."""
        commands: dict[str, SlashCommand] = {}
        entries = result.get("data") if isinstance(result, Mapping) else None
        for entry in entries if isinstance(entries, list) else []:
            skills = entry.get("skills") if isinstance(entry, Mapping) else None
            for skill in skills if isinstance(skills, list) else []:
                usable = isinstance(skill, Mapping) and skill.get("enabled") is not False
                if usable and isinstance(skill.get("name"), str):
                    name = skill["name"]
                    description = skill.get("shortDescription") or skill.get("description") or ""
                    commands.setdefault(name, SlashCommand(name=name, description=str(description)))
                    if isinstance(skill.get("path"), str):
                        self.skills.setdefault(name, skill["path"])
        listed = list(commands.values())
        changed = listed != self.commands
        self.commands = listed
        return changed

    def apply_title(self, name: Any) -> bool:
        if not isinstance(name, str) or name == self.title:
            return False
        self.title = name
        return True


def creation_problem(state: CodexState, configure: Mapping[str, ConfigValue]) -> str | None:
    """Why creation-time options cannot be applied (unknown option, unknown model, effort the model lacks), or
    None. Checked against the catalogue before the thread exists."""
    for option, value in configure.items():
        if option not in (MODEL, EFFORT, MODE, SANDBOX):
            return f"unknown option `{option}`"
        if not isinstance(value, str):
            return "wrong value type"
    model_id = configure.get(MODEL)
    if isinstance(model_id, str) and state.models and state.find_model(model_id) is None:
        return f"`{model_id}` is not a choice of `{MODEL}`"
    if isinstance(configure.get(MODE), str) and configure[MODE] not in dict(APPROVAL_POLICIES):
        return f"`{configure[MODE]}` is not a choice of `{MODE}`"
    if isinstance(configure.get(SANDBOX), str) and configure[SANDBOX] not in dict(SANDBOX_MODES):
        return f"`{configure[SANDBOX]}` is not a choice of `{SANDBOX}`"
    effort = configure.get(EFFORT)
    if isinstance(effort, str):
        model = state.find_model(model_id if isinstance(model_id, str) else None) or state.default_model()
        if model is not None and model.efforts and effort not in model.efforts:
            return f"`{effort}` is not a choice of `{EFFORT}` for {model.id}"
    return None


def thread_params(configure: Mapping[str, ConfigValue]) -> dict[str, Any]:
    """The creation-time options as `thread/start` / `resume` / `fork` params."""
    params: dict[str, Any] = {}
    if MODEL in configure:
        params["model"] = configure[MODEL]
    if MODE in configure:
        params["approvalPolicy"] = configure[MODE]
    if SANDBOX in configure:
        params["sandbox"] = configure[SANDBOX]
    return params


def _pairs(pairs: Sequence[tuple[str, str]]) -> list[ConfigChoice]:
    return [ConfigChoice(value=value, label=label) for value, label in pairs]


def _select(
    option: str, name: str, category: str, choices: list[ConfigChoice], current: str | None, live: bool
) -> ConfigOption:
    return ConfigOption(
        id=option, name=name, category=category, kind=SelectKind(choices=choices), current=current, live=live
    )

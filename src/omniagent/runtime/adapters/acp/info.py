"""What an ACP session looks like to the runtime: capabilities from `initialize`, config options from modes,
first-class models and configOptions, slash commands, title, and the login methods an agent offers.

A first-class `models` object becomes the option `model` (set with `session/set_model`) only while no configOption
has category "model" or id "model": an agent that offers both (Qwen Code) is switched through its configOption, the
newer and schema-described way, so the caller never sees two model selectors.

`SessionState` holds it all and builds the `DriverInfo`; its `apply_*` methods take the raw (already
schema-checked) JSON of an update and say whether anything changed. It reads raw JSON so one mapping serves v1 and
v2; the few paths that differ between the versions are data (`_PATHS`). No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from msgspec import structs

from omniagent.protocols.sidecar.agents import (
    AgentDetails,
    AuthUnknown,
    BooleanKind,
    Capabilities,
    Capability,
    ConfigChoice,
    ConfigOption,
    ConfigValue,
    EnvVarLogin,
    LoginMethod,
    McpTransport,
    SelectKind,
    SessionConfiguration,
    SlashCommand,
    TerminalLogin,
    ordered_features,
)
from omniagent.runtime import driver as d

# The option that v1 session modes become; set through `session/set_mode`, not `set_config_option`.
MODE_OPTION = "mode"
# The option that v1's unstable first-class `models` become; set through `session/set_model`.
MODEL_OPTION = "model"
# ACP config option categories kept as they are; any other category reads as "other".
_CATEGORIES = frozenset({"mode", "model", "model_config", "thought_level", "other"})
# Features every ACP agent has: the protocol itself carries permissions, plans and slash commands.
_ALWAYS = frozenset({Capability.PERMISSIONS, Capability.PLAN, Capability.SLASH_COMMANDS})

# Where each fact sits in the initialize result, per version (v2 nests capabilities under
# `capabilities.session`, turns booleans into objects and drops SSE).
_PATHS: Mapping[int, Mapping[str, tuple[str, ...]]] = {
    1: {
        "version": ("agentInfo", "version"),
        "image": ("agentCapabilities", "promptCapabilities", "image"),
        "audio": ("agentCapabilities", "promptCapabilities", "audio"),
        "embedded": ("agentCapabilities", "promptCapabilities", "embeddedContext"),
        "http": ("agentCapabilities", "mcpCapabilities", "http"),
        "sse": ("agentCapabilities", "mcpCapabilities", "sse"),
        "steering": ("agentCapabilities", "_meta", "steering", "supported"),
        "fork": ("agentCapabilities", "sessionCapabilities", "fork"),
    },
    2: {
        "version": ("info", "version"),
        "image": ("capabilities", "session", "prompt", "image"),
        "audio": ("capabilities", "session", "prompt", "audio"),
        "embedded": ("capabilities", "session", "prompt", "embeddedContext"),
        "http": ("capabilities", "session", "mcp", "http"),
        "steering": ("capabilities", "_meta", "steering", "supported"),
        "fork": ("capabilities", "session", "fork"),
    },
}


@dataclass(frozen=True, slots=True)
class AgentFacts:
    """What the agent advertised in `initialize`."""

    version: str | None = None
    image: bool = False
    audio: bool = False
    embedded: bool = False  # resource blocks (we send PDFs as embedded resources)
    resume: bool = False
    steer: bool = False
    fork: bool = False  # `session/fork` (unstable in v1 and v2)
    set_model: bool = False  # `session/set_model` exists (v1): only then do first-class `models` become an option
    mcp_transports: tuple[McpTransport, ...] = (McpTransport.STDIO,)


def agent_facts(
    protocol_version: int, init: Mapping[str, Any], *, can_resume: bool, can_set_model: bool = False
) -> AgentFacts:
    """The facts in an initialize result (raw JSON) of the given protocol version."""
    paths = _PATHS[protocol_version]

    def present(name: str) -> bool:
        path = paths.get(name)
        return path is not None and _present(_at(init, path))

    transports = [McpTransport.STDIO]
    transports += [McpTransport.HTTP] if present("http") else []
    transports += [McpTransport.SSE] if present("sse") else []
    version = _at(init, paths["version"])
    return AgentFacts(
        version=version if isinstance(version, str) else None,
        image=present("image"),
        audio=present("audio"),
        embedded=present("embedded"),
        resume=can_resume,
        # Only an explicit `true` counts: steering is a vendor extension (`_session/steering`).
        steer=_at(init, paths["steering"]) is True,
        fork=present("fork"),
        set_model=can_set_model,
        mcp_transports=tuple(transports),
    )


@dataclass(slots=True)
class SessionState:
    """One ACP session as the runtime describes it; `info()` is the `DriverInfo` the loop sees."""

    facts: AgentFacts
    session_id: str = ""
    mode: ConfigOption | None = None  # from v1 `modes`
    model: ConfigOption | None = None  # from v1's unstable first-class `models`
    wire_options: list[ConfigOption] = field(default_factory=list)  # from `configOptions`
    commands: list[SlashCommand] = field(default_factory=list)
    title: str | None = None
    seen: set[Capability] = field(default_factory=set)  # features learnt on first sight (ContextUsage)

    def info(self) -> d.DriverInfo:
        features = set(_ALWAYS) | self.seen
        if self.facts.image:
            features.add(Capability.IMAGES)
        if self.facts.resume:
            features.add(Capability.RESUME)
        if self.facts.steer:
            features.add(Capability.STEER)
        if self.facts.fork:
            features.add(Capability.FORK)
        options = self.options()
        details = AgentDetails(
            version=self.facts.version,
            auth=AuthUnknown(),
            capabilities=Capabilities(
                features=ordered_features(features), mcp_transports=list(self.facts.mcp_transports)
            ),
            config_options=options,
            commands=list(self.commands),
        )
        current = {option.id: option.current for option in options if option.current is not None}
        return d.DriverInfo(
            details=details,
            configuration=SessionConfiguration(options=current),
            resume_token=self.session_id or None,
            title=self.title,
            deterministic_turn_end=True,  # the prompt's answer (v1) or idle state (v2) ends a prompted turn
            deterministic_agent_turn_end=False,  # nothing ends the agent's own turns: a quiet window does
        )

    def options(self) -> list[ConfigOption]:
        """The wire's options, plus the mode option unless a wire option already uses its id, plus the first-class
        model unless a wire option is a model selector (module docstring)."""
        ids = {option.id for option in self.wire_options}
        extra = [self.mode] if self.mode is not None and self.mode.id not in ids else []
        if self.model is not None and self._first_class_model():
            extra.append(self.model)
        return [*extra, *self.wire_options]

    def uses_set_mode(self, option: str) -> bool:
        """Whether `option` is set through `session/set_mode` (a v1 mode) rather than `set_config_option`."""
        return option == MODE_OPTION and self.mode is not None and all(o.id != option for o in self.wire_options)

    def uses_set_model(self, option: str) -> bool:
        """Whether `option` is the first-class model, set through `session/set_model`."""
        return option == MODEL_OPTION and self.model is not None and self._first_class_model()

    def _first_class_model(self) -> bool:
        return all(o.id != MODEL_OPTION and o.category != "model" for o in self.wire_options)

    # --- updates (each returns whether the info changed) ---------------------------------------------------

    def apply_session(self, result: Mapping[str, Any]) -> None:
        """A `session/new`, `load`, `resume` or `fork` result: modes, first-class models and configOptions."""
        modes = result.get("modes")
        if isinstance(modes, Mapping):
            self.mode = mode_option(modes)
        models = result.get("models")
        if isinstance(models, Mapping) and self.facts.set_model:
            self.model = model_option(models)
        options = result.get("configOptions")
        if isinstance(options, list):
            self.wire_options = config_options(options)

    def apply_mode(self, mode_id: str) -> bool:
        if self.mode is None or self.mode.current == mode_id:
            return False
        self.mode = structs.replace(self.mode, current=mode_id)
        return True

    def apply_model(self, model_id: str) -> bool:
        if self.model is None or self.model.current == model_id:
            return False
        self.model = structs.replace(self.model, current=model_id)
        return True

    def apply_config_options(self, raw: Sequence[Any]) -> bool:
        before = self.wire_options
        self.wire_options = config_options(raw)
        return before != self.wire_options

    def apply_value(self, option: str, value: ConfigValue) -> bool:
        """Our own `configure` took effect (the agent answered without an error)."""
        if self.uses_set_mode(option):
            return self.apply_mode(str(value))
        if self.uses_set_model(option):
            return self.apply_model(str(value))
        changed = False
        for index, candidate in enumerate(self.wire_options):
            if candidate.id == option and candidate.current != value:
                self.wire_options[index] = structs.replace(candidate, current=value)
                changed = True
        return changed

    def apply_commands(self, raw: Sequence[Any]) -> bool:
        commands = [slash_command(item) for item in raw if isinstance(item, Mapping) and "name" in item]
        changed = commands != self.commands
        self.commands = commands
        return changed

    def apply_title(self, title: Any) -> bool:
        if not isinstance(title, str) or title == self.title:
            return False
        self.title = title
        return True

    def see(self, feature: Capability) -> bool:
        if feature in self.seen:
            return False
        self.seen.add(feature)
        return True

    def with_facts(self, **changes: Any) -> None:
        self.facts = replace(self.facts, **changes)


def mode_option(modes: Mapping[str, Any]) -> ConfigOption | None:
    """v1 `modes{currentModeId, availableModes}` as the live select option `mode`."""
    return _state_option(modes, "availableModes", "currentModeId", "id", MODE_OPTION, "Mode")


def model_option(models: Mapping[str, Any]) -> ConfigOption | None:
    """v1 `models{currentModelId, availableModels:[{modelId, name, description?}]}` as the live select option
    `model` (Grok's and claude-code-acp's describe each model)."""
    return _state_option(models, "availableModels", "currentModelId", "modelId", MODEL_OPTION, "Model")


def _state_option(
    state: Mapping[str, Any], list_key: str, current_key: str, id_key: str, option: str, name: str
) -> ConfigOption | None:
    """A first-class ACP state (`{current…Id, available…:[{<id_key>, name}]}`) as a live select option."""
    available = state.get(list_key)
    if not isinstance(available, list):
        return None
    choices = [
        _choice(item[id_key], item)
        for item in available
        if isinstance(item, Mapping) and isinstance(item.get(id_key), str)
    ]
    current = state.get(current_key)
    return ConfigOption(
        id=option,
        name=name,
        category=option,
        kind=SelectKind(choices=choices),
        current=current if isinstance(current, str) else None,
        live=True,
    )


def config_options(raw: Sequence[Any]) -> list[ConfigOption]:
    """ACP `configOptions` (v1 `id`, v2 `configId`) as live options; grouped selects are flattened, other kinds
    dropped."""
    options: list[ConfigOption] = []
    for item in raw:
        if not isinstance(item, Mapping):
            continue
        option_id = item.get("id", item.get("configId"))
        if not isinstance(option_id, str):
            continue
        category = item.get("category")
        if isinstance(category, str) and category not in _CATEGORIES:
            category = "other"
        current = item.get("currentValue")
        if item.get("type") == "boolean":
            kind: BooleanKind | SelectKind = BooleanKind()
            value: ConfigValue | None = current if isinstance(current, bool) else None
        elif item.get("type", "select") == "select":
            kind = SelectKind(choices=_choices(item.get("options")))
            value = current if isinstance(current, str) else None
        else:
            continue
        name = str(item.get("name") or option_id)
        options.append(
            ConfigOption(
                id=option_id,
                name=name,
                category=category if isinstance(category, str) else None,
                kind=kind,
                current=value,
                live=True,
            )
        )
    return options


def _choices(raw: Any) -> list[ConfigChoice]:
    choices: list[ConfigChoice] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, Mapping):
            continue
        if isinstance(item.get("options"), list):  # a group: v1 `group`, v2 `groupId`
            choices.extend(_choices(item["options"]))
        elif isinstance(item.get("value"), str):
            choices.append(_choice(item["value"], item))
    return choices


def _choice(value: str, raw: Mapping[str, Any]) -> ConfigChoice:
    """One choice: labelled by its `name` (else its value), with the agent's `description` when it gives one."""
    description = raw.get("description")
    return ConfigChoice(
        value=value,
        label=str(raw.get("name") or value),
        description=description if isinstance(description, str) else None,
    )


def slash_command(raw: Mapping[str, Any]) -> SlashCommand:
    """An `availableCommands` entry; v1 input is `{hint}`, v2 `{type:"text", hint}`."""
    hint = raw.get("input")
    hint_text = hint.get("hint") if isinstance(hint, Mapping) else None
    return SlashCommand(
        name=str(raw["name"]),
        description=str(raw.get("description") or ""),
        input_hint=hint_text if isinstance(hint_text, str) else None,
    )


def login_methods(auth_methods: Any, executable: str) -> list[LoginMethod]:
    """The runnable logins among an agent's `authMethods`: terminal methods (also qwen's `_meta{type:"terminal",
    args}` shape) become `[executable, …args]` with the method's env; env_var methods name their variables."""
    methods: list[LoginMethod] = []
    for method in auth_methods if isinstance(auth_methods, list) else []:
        if not isinstance(method, Mapping):
            continue
        meta = method.get("_meta")
        terminal = method if method.get("type") == "terminal" else meta if _is_terminal(meta) else None
        description = str(method.get("name") or method.get("description") or method.get("id") or "log in")
        if terminal is not None:
            args = [str(arg) for arg in terminal.get("args") or [] if isinstance(arg, str)]
            methods.append(
                TerminalLogin(command=[executable, *args], env=_env(terminal.get("env")), description=description)
            )
        elif method.get("type") == "env_var":
            for var in method.get("vars") or []:
                if isinstance(var, Mapping) and isinstance(var.get("name"), str):
                    methods.append(EnvVarLogin(name=var["name"]))
    return methods


def _is_terminal(meta: Any) -> bool:
    return isinstance(meta, Mapping) and meta.get("type") == "terminal"


def _env(raw: Any) -> dict[str, str]:
    """v1 terminal env is a map; v2 a list of `{name, value}`."""
    if isinstance(raw, Mapping):
        return {str(k): str(v) for k, v in raw.items()}
    if isinstance(raw, list):
        return {str(e["name"]): str(e.get("value", "")) for e in raw if isinstance(e, Mapping) and "name" in e}
    return {}


def _at(node: Any, path: Sequence[str]) -> Any:
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _present(value: Any) -> bool:
    """v1 advertises with `true`, v2 with an object; absent, null and false mean no."""
    return value is not None and value is not False

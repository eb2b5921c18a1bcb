"""Every sidecar model against the anyagent schema: it has exactly the schema's fields (and our extensions of the
wire, where the schema leaves the shape open), and an absent optional is written as `null`, never left out, except
the fields the wire omits (`AgentInstallation.upgrade` and `acp_args`; docs/sidecar.md "absent optional fields are
`null`, not omitted") and our extensions, which an absent value leaves out so the line is the wire's own.

The models are found by walking the package, so a model added later is checked too (or fails to find its shape).
`ErrorBody`'s own fields (`detail`, `login`, …) are the open part of its schema (`additionalProperties`): each is
written only by the error kinds that carry it, so they default to `UNSET` (left out) instead of `None`.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

import msgspec
import pytest
from msgspec.structs import FieldInfo

import omniagent.protocols.sidecar as sidecar
from omniagent.protocols.sidecar.base import Newtype, SidecarModel, Variant
from omniagent.protocols.sidecar.commands import EXTENSIONS
from tests.sidecar_schema import SPEC

# Our extensions of the wire (docs/sidecar.md): fields the schema does not name, in shapes it leaves open.
EXTENDED = {("Completed", "limit")}
# The only fields the wire omits when absent, and our extensions (absent, the line is the wire's own).
OMITTED = {("AgentInstallation", "upgrade"), ("AgentInstallation", "acp_args"), *EXTENDED}
# Models that are not a wire shape of their own: bases, and the open/generate options mixed into both commands.
NOT_SHAPES = {"SidecarModel", "Variant", "Newtype", "_Command", "OpenOptions"}


def classes() -> Iterator[type[SidecarModel]]:
    """Every wire model class defined in the sidecar package."""
    for module_info in pkgutil.iter_modules(sidecar.__path__):
        module = importlib.import_module(f"{sidecar.__name__}.{module_info.name}")
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, SidecarModel)
                and value.__module__ == module.__name__
                and name not in NOT_SHAPES
                and value not in EXTENSIONS
            ):
                yield value


# The models with fields of their own (a newtype carries one payload: its payload's model is checked instead).
MODELS = sorted(
    (model for model in classes() if model.__struct_fields__ and not issubclass(model, Newtype)),
    key=lambda model: model.__name__,
)
# Payload model → the tags of the newtypes carrying it (`CommandSpec` is the body of ToolInput's `Command`).
CARRIED = {
    field.type: newtype.TAG
    for newtype in classes()
    if issubclass(newtype, Newtype)
    for field in msgspec.structs.fields(newtype)
}


@cache
def definitions() -> Mapping[str, Any]:
    return dict(json.loads(SPEC.read_text())["definitions"])


def _arms(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [arm for key in ("oneOf", "anyOf") for arm in schema.get(key, []) if isinstance(arm, Mapping)]


def shapes(model: type[SidecarModel]) -> list[Mapping[str, Any]]:
    """The schema objects `model` can be: its own definition, the body of its tagged arm, its command or line."""
    found: list[Mapping[str, Any]] = []
    own = definitions().get(model.__name__)
    if own is not None and "properties" in own:
        found.append(own)
    for definition in definitions().values():
        for arm in _arms(definition):
            properties = arm.get("properties", {})
            tag = getattr(model, "TAG", None) if issubclass(model, Variant) else CARRIED.get(model)
            if tag is not None and set(properties) == {tag} and "properties" in properties[tag]:
                found.append(properties[tag])
            command = properties.get("cmd", {}).get("const")
            if command is not None and _command(model) == command:
                found.append({**arm, "properties": {**definition["properties"], **properties}})
    if not found and model.__name__.endswith("Line"):
        wanted = set(_aliases(model).values())
        found = [arm for arm in _arms(definitions()["Line"]) if set(arm.get("properties", {})) == wanted]
    if not found and model.__name__ == "InlineAcp":  # an arm of the untagged `AgentRef`
        found = [arm for arm in _arms(definitions()["AgentRef"]) if "properties" in arm]
    return found


def _command(model: type[SidecarModel]) -> str | None:
    config = model.__struct_config__
    return str(config.tag) if config.tag_field == "cmd" else None


def _aliases(model: type[SidecarModel]) -> dict[str, str]:
    """Field name → wire name, with the tag field of a tagged struct (a command's `cmd`)."""
    aliases = {field.name: field.encode_name for field in msgspec.structs.fields(model)}
    tag_field = model.__struct_config__.tag_field
    return aliases | {tag_field: tag_field} if tag_field is not None else aliases


def _optional(field: FieldInfo) -> bool:
    return not field.required


def _open(field: FieldInfo) -> bool:
    """A field of the schema's open part (`additionalProperties`): written only when set."""
    return field.default is msgspec.UNSET


def test_the_walk_finds_the_models_of_every_module() -> None:
    """A guard on the walk itself: models from each module are among those checked."""
    names = {model.__name__ for model in MODELS}
    assert {"ConfigChoice", "Choice", "ToolUpdate", "ContextUsage", "Open", "ErrorLine", "Diagnostic"} <= names


@pytest.mark.parametrize("model", EXTENSIONS, ids=lambda model: model.__name__)
def test_omniagents_extensions_are_no_shape_of_the_schema(model: type[SidecarModel]) -> None:
    """The hub's commands and replies (attach, detach, list) are ours: they must not shadow a schema command or
    definition, or an anyagent client would read them as its own."""
    assert model.__name__ not in definitions()
    command = _command(model)
    if command is not None:
        commands = {arm.get("properties", {}).get("cmd", {}).get("const") for arm in _arms(definitions()["Frame"])}
        assert command not in commands


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_the_model_has_exactly_the_schemas_fields(model: type[SidecarModel]) -> None:
    """Every property the schema gives the shape is a field of the model, and the model adds none but fields of
    the shape's open part."""
    candidates = shapes(model)
    assert candidates, f"{model.__name__} matches no shape of the schema"
    open_fields = {field.encode_name for field in msgspec.structs.fields(model) if _open(field)}
    assert not open_fields or all(shape.get("additionalProperties") is True for shape in candidates)
    extended = {name for owner, name in EXTENDED if owner == model.__name__}
    assert not extended or all(shape.get("additionalProperties") is not False for shape in candidates)
    fields = set(_aliases(model).values()) - open_fields - extended
    assert any(set(shape["properties"]) == fields for shape in candidates), (
        f"{model.__name__} fields {sorted(fields)} vs schema {[sorted(s['properties']) for s in candidates]}"
    )


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_absent_optionals_are_written_as_null_and_only_the_two_exceptions_are_omitted(
    model: type[SidecarModel],
) -> None:
    """An instance with every optional field left at its default writes each of them: `null` where the default
    is None. Only the fields the wire omits are left out."""
    fields = msgspec.structs.fields(model)
    required = {field.name: None for field in fields if not _optional(field)}  # not validated, and not looked at
    body = msgspec.to_builtins(model(**required))  # a variant's body: its tag is put around this
    for field in fields:
        if not _optional(field) or _open(field):
            continue
        if (model.__name__, field.name) in OMITTED:
            assert model.__struct_config__.omit_defaults
            assert field.encode_name not in body
            continue
        assert field.encode_name in body, f"{model.__name__}.{field.name} is left out when absent"
        if field.default is None:
            assert body[field.encode_name] is None

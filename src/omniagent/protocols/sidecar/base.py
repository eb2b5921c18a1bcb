"""The sidecar models' base: `msgspec.Struct`s, serde's externally tagged enums, and the codec between them and JSON.

Structs cost next to nothing to define and to build, and msgspec encodes them without Python callbacks; what
msgspec cannot do by itself is serde's externally tagged enum, so this module adds it:

- an arm is a `Variant` subclass with a `TAG`. With no fields it is a unit variant, encoded as the bare string
  `TAG`; a `Newtype` has one field whose value is the whole payload, `{TAG: value}`; otherwise it is a struct
  variant, `{TAG: {fields…}}`;
- `tagged(name, A | B | …)` makes the union's runtime type: an abstract class the arms are registered under, which
  msgspec hands to `convert`'s hook for decoding. Type checkers are shown the plain union instead (`if
  TYPE_CHECKING: Union = _ARMS` / `else: Union = tagged("Union", _ARMS)`), so a field is typed by its arms
  everywhere but in msgspec's eyes.

Encoding (`dump`, `SidecarModel.encode`, `wire`): a struct with no tagged value anywhere below it is encoded by
msgspec as it is; one with tagged values is copied with those fields replaced by their wire form (`structs.replace`,
so field order and the null policy stay msgspec's), by a per-class plan worked out once from the field types.
Decoding (`convert`) is strict: no coercion (`"7"` is not an int), unknown fields ignored, tags checked against the
union's arms.

Null policy: every field is written, an absent optional as `null` (serde's default); a class whose absent optionals
the wire omits says `omit_defaults=True` (only `AgentInstallation`).
"""

from __future__ import annotations

import abc
import time
import types
import typing
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any, ClassVar, TypeVar, dataclass_transform

import msgspec
from msgspec import Meta, Struct, StructMeta, ValidationError
from msgspec.structs import replace

__all__ = [
    "ENCODER",
    "U64",
    "Diagnostic",
    "DiagnosticLevel",
    "Newtype",
    "SidecarModel",
    "SystemTime",
    "Tagged",
    "ValidationError",
    "Variant",
    "convert",
    "describe",
    "dump",
    "tagged",
    "wire",
]

T = TypeVar("T")
U64 = Annotated[int, Meta(ge=0)]
# One encoder for every line: msgspec encoders keep an internal buffer, so reusing one avoids reallocating it.
ENCODER = msgspec.json.Encoder()


class _KeywordOnly(StructMeta):
    """Every sidecar struct takes keyword arguments only (msgspec's `kw_only` is per class, not inherited), so a
    field without a default may follow one with a default, in the schema's order."""

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **config: Any) -> _KeywordOnly:
        config.setdefault("kw_only", True)
        return super().__new__(mcls, name, bases, namespace, **config)


@dataclass_transform(kw_only_default=True, field_specifiers=(msgspec.field,))
class SidecarModel(Struct, metaclass=_KeywordOnly):
    """A sidecar wire shape. Built by keyword, without validation (input is validated by `convert`, our own output
    by the schema tests)."""

    def dump(self) -> Any:
        """The JSON value this model puts on the wire (dicts, lists, strings, numbers)."""
        return dump(self)

    def encode(self) -> bytes:
        """This model as one compact JSON line (no newline)."""
        return ENCODER.encode(wire(self))


class Variant(SidecarModel):
    """One arm of an externally tagged enum."""

    TAG: ClassVar[str]


class Newtype(Variant):
    """An arm whose payload is its one field's value (`{"Prompt":"p1"}`, `{"StatusChanged":"Idle"}`)."""


class Tagged(abc.ABC):
    """The runtime type of an externally tagged union: its arms are registered as virtual subclasses."""

    arms: ClassVar[dict[str, type[Variant]]]

    @classmethod
    def decode(cls, value: Any) -> Variant:
        """One wire value to its arm. Raises `ValueError` (with where it failed) for anything else."""
        if isinstance(value, str):
            arm = cls.arms.get(value)
            if arm is not None and not arm.__struct_fields__:
                return arm()
        elif isinstance(value, dict) and len(value) == 1:
            ((tag, body),) = value.items()
            arm = cls.arms.get(tag)
            if arm is not None and arm.__struct_fields__:
                field = arm.__struct_fields__[0] if issubclass(arm, Newtype) else None
                try:
                    return convert(body if field is None else {field: body}, arm)
                except ValidationError as exc:
                    raise ValueError(_nested(str(exc), tag, field)) from None
        raise ValueError(f"expected one of: {', '.join(cls.arms)}")


def tagged(name: str, union: Any) -> type[Tagged]:
    """The runtime type of the externally tagged union `union` (`A | B | …`, each a `Variant`)."""
    arms: tuple[type[Variant], ...] = typing.get_args(union)
    union_type = typing.cast(type[Tagged], type(name, (Tagged,), {"arms": {arm.TAG: arm for arm in arms}}))
    for arm in arms:
        union_type.register(arm)
    return union_type


def _nested(message: str, tag: str, field: str | None) -> str:
    """An arm's error message with its path put under the tag (a newtype's own field name left out)."""
    text, path = _split(message)
    if field is not None:
        path = path.removeprefix(f".{field}")
    return f"{text} - at `$.{tag}{path}`"


def _split(message: str) -> tuple[str, str]:
    """msgspec's `what - at `$.inner` - at `$.outer`` as (what, `.outer.inner`)."""
    text, *paths = message.split(" - at `$")
    return text, "".join(path.removesuffix("`") for path in reversed(paths))


# --- decoding ------------------------------------------------------------------------------------------------


def _decode_hook(type_: type, value: Any) -> Any:
    if isinstance(type_, type) and issubclass(type_, Tagged):
        return type_.decode(value)
    raise NotImplementedError


@typing.overload
def convert(value: Any, type_: type[T]) -> T: ...
@typing.overload
def convert(value: Any, type_: Any) -> Any: ...
def convert(value: Any, type_: Any) -> Any:
    """`value` (decoded JSON) as `type_` (a model or a union), strictly: no coercion, tags checked.

    Raises `ValidationError`."""
    return msgspec.convert(value, type_, dec_hook=_decode_hook)


def describe(error: msgspec.DecodeError, *, top: str | None = None) -> str:
    """A decoding or validation error as `where: what` (`turns: Expected int >= 1`); at the top level `what`, or
    `top: what` when given."""
    text, path = _split(str(error))
    where, text = path.lstrip(".") or top, text.replace("`", "")
    return f"{where}: {text}" if where else text


# --- encoding ------------------------------------------------------------------------------------------------

_Wire = Callable[[Any], Any]
# Per struct class: how an instance becomes something msgspec encodes as its wire JSON (None: as it is).
_PLANS: dict[type, _Wire | None] = {}


def wire(value: Struct) -> Any:
    """`value` in a form msgspec encodes exactly as the wire: tagged values replaced by their encoding."""
    cls = type(value)
    try:
        plan = _PLANS[cls]
    except KeyError:
        plan = _plan(cls)
    return value if plan is None else plan(value)


def dump(value: Any) -> Any:
    """The JSON value of a model or a tagged arm (dicts, lists, strings, numbers)."""
    return msgspec.to_builtins(wire(value) if isinstance(value, Struct) else value)


def _plan(cls: type[Struct]) -> _Wire | None:
    _PLANS[cls] = None  # a class that holds itself (none do today) would encode as it is
    plan = _build_plan(cls)
    _PLANS[cls] = plan
    return plan


def _build_plan(cls: type[Struct]) -> _Wire | None:
    converted = {
        field.name: convert_field
        for field in msgspec.structs.fields(cls)
        if (convert_field := _converter(field.type)) is not None
    }
    body = _replacing(converted) if converted else None
    if not issubclass(cls, Variant):
        return body
    tag = cls.TAG
    if not cls.__struct_fields__:
        return lambda value: tag
    if issubclass(cls, Newtype):
        (name,) = cls.__struct_fields__
        inner = converted.get(name)
        if inner is None:
            return lambda value: {tag: getattr(value, name)}
        return lambda value: {tag: inner(getattr(value, name))}
    if body is None:
        return lambda value: {tag: value}
    return lambda value: {tag: body(value)}


def _replacing(converted: dict[str, _Wire]) -> _Wire:
    """A copy of the struct with the `converted` fields replaced by their wire form. Built as source once per
    class: a plain keyword call (`replace(value, kind=c0(value.kind))`) costs half of a `**kwargs` dict per
    instance, and every event line goes through one."""
    calls = ", ".join(f"{name}=c{index}(value.{name})" for index, name in enumerate(converted))
    namespace = {"replace": replace, **{f"c{index}": each for index, each in enumerate(converted.values())}}
    plan: _Wire = eval(f"lambda value: replace(value, {calls})", namespace)
    return plan


def _converter(type_: Any) -> _Wire | None:
    """How a field of `type_` becomes its wire form, or None when msgspec encodes it as it is."""
    type_ = _unannotated(type_)
    origin = typing.get_origin(type_)
    if origin is None:
        if isinstance(type_, type) and issubclass(type_, Tagged):
            return wire
        if isinstance(type_, type) and issubclass(type_, Struct):
            plan = _PLANS[type_] if type_ in _PLANS else _plan(type_)
            return None if plan is None else wire
        return None
    args = typing.get_args(type_)
    if origin in (typing.Union, types.UnionType):
        checks = tuple(
            (typing.get_origin(arg) or arg, each)
            for arg in map(_unannotated, args)
            if (each := _converter(arg)) is not None
        )
        return _union(checks) if checks else None
    if origin in (list, tuple):
        item = _converter(args[0])
        return None if item is None else lambda values: [item(value) for value in values]
    if origin is dict:
        entry = _converter(args[1])
        return None if entry is None else lambda values: {key: entry(value) for key, value in values.items()}
    return None


def _unannotated(type_: Any) -> Any:
    return typing.get_args(type_)[0] if typing.get_origin(type_) is Annotated else type_


def _union(checks: tuple[tuple[type, _Wire], ...]) -> _Wire:
    def convert_union(value: Any) -> Any:
        for cls, each in checks:
            if isinstance(value, cls):
                return each(value)
        return value

    return convert_union


# --- scalars shared by the models ----------------------------------------------------------------------------


class SystemTime(SidecarModel, kw_only=False, gc=False):
    """A wall-clock instant as serde encodes `std::time::SystemTime`. Positional too: one is made per event."""

    secs_since_epoch: U64
    nanos_since_epoch: Annotated[int, Meta(ge=0, lt=1_000_000_000)]

    @classmethod
    def now(cls) -> SystemTime:
        return cls(*divmod(time.time_ns(), 1_000_000_000))


class DiagnosticLevel(StrEnum):
    INFO = "Info"
    WARNING = "Warning"
    ERROR = "Error"


class Diagnostic(SidecarModel):
    level: DiagnosticLevel
    message: str

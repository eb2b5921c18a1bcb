"""The base of every yuke model (a `msgspec.Struct`), the yuke null policy, and strict decoding.

Null policy: absent optionals are omitted, never written as `null`. Every optional field defaults to None, so
`omit_defaults` omits exactly the absent ones; a model whose fields have other defaults (`TokenUsage`'s zeros)
is declared with `omit_defaults=False` and writes every field.

Unions are tagged by `type`: each arm passes `tag="…"` to msgspec (which writes it first and refuses an unknown
one) and repeats it as a `type` class attribute, so code reads `part.type` as it reads a field.

Decoding (`decode`, `decode_json`) is strict: no coercion (no "7" or `true` for 7), bounds and patterns checked,
unknown fields ignored, an explicit `null` optional read as absent; it raises `DecodeError`. Constructors do not
validate: the engine builds models by keyword from values it owns, and the schema tests check what it writes.
"""

from __future__ import annotations

import functools
from typing import Any, TypeVar, dataclass_transform, overload

import msgspec

T = TypeVar("T")

# What `decode` and `decode_json` raise for a value that does not fit the type (decode_json: or is not JSON).
DecodeError = msgspec.DecodeError


class _KeywordOnly(msgspec.StructMeta):
    """Every model's fields are keyword-only, so they keep the spec's order (a required field may follow an
    optional one); msgspec's `kw_only` covers only the class that passes it, hence this metaclass."""

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **config: Any) -> _KeywordOnly:
        config.setdefault("kw_only", True)
        return super().__new__(mcls, name, bases, namespace, **config)


@dataclass_transform(kw_only_default=True, field_specifiers=(msgspec.field,))
class YukeModel(msgspec.Struct, metaclass=_KeywordOnly, omit_defaults=True):
    """Base of every yuke model, built by keyword. Mutable: build a new model rather than change one already
    sent."""

    def dump(self) -> dict[str, Any]:
        """The JSON-ready wire form: plain dicts, lists and scalars, absent optionals omitted."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out


class Empty(YukeModel):
    """Empty params or result object."""


@overload
def decode(kind: type[T], value: object) -> T: ...
@overload
def decode(kind: Any, value: object) -> Any: ...
def decode(kind: Any, value: object) -> Any:
    """`value` (decoded JSON: dicts, lists, scalars) as `kind`, a model or a union of models. Raises DecodeError."""
    return msgspec.convert(value, kind)


@overload
def decode_json(kind: type[T], data: bytes | str) -> T: ...
@overload
def decode_json(kind: Any, data: bytes | str) -> Any: ...
def decode_json(kind: Any, data: bytes | str) -> Any:
    """One JSON document as `kind` (e.g. a stored payload). Raises DecodeError."""
    return _decoder(kind).decode(data)


@functools.cache
def _decoder(kind: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(kind)

"""The base of the generated ACP models: `msgspec.Struct`s with exact wire names, three-state fields, open unions.

- Fields: every optional field defaults to `UNSET` (omitted on the wire), so ACP v2's three-state patches survive
  (omitted = unchanged, `null` = clear, value = replace). Discriminators are ordinary fields whose default is the tag,
  so a variant built in Python always writes its tag, and a variant may carry two (`sessionUpdate` + `state`).
- Unions: msgspec decodes a tagged union only when it is closed and has one tag, so every union the schema needs more
  from is a marker class (`tagged_union`, `plain_union`) that msgspec hands to `decode_hook`: a known tag converts
  strictly to its variant, an unknown one to the union's `...Other` variant (open unions), a missing one to the
  untagged default; a plain union takes the member that fits best. Each variant class is registered as a virtual
  subclass of its marker, which is what msgspec checks the hook's answer against.
- Preservation of unknown variants and `_meta`: `_meta` is a field of every type; an `...Other` variant
  and the top value of `parse` keep the JSON they were read from, and `dump()` gives it back unchanged (unknown fields
  included); models are frozen, so that JSON stays true. A known variant nested in a parsed value keeps only its
  known fields if it is taken out of it and sent inside a model built in Python: nothing does that (proxying sends
  what `dump()` of the parsed value gives). Keeping the JSON costs a reference; copying unknown fields into every
  Struct would cost a second pass over each object msgspec has already converted.
- Strict input: msgspec's strict conversion (no `"1"` for 1); unknown fields of known types are ignored, as ACP
  allows them.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, cast, get_origin

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "UNSET",
    "AcpModel",
    "UnsetType",
    "ValidationError",
    "dump",
    "parse",
    "plain_union",
    "tagged_union",
]

ValidationError = msgspec.ValidationError


class AcpModel(msgspec.Struct, frozen=True, kw_only=True, dict=True, repr_omit_defaults=True):
    """An ACP object. Build with Python names (keywords); `dump()` gives the wire JSON. `dict=True` gives a parsed
    value somewhere to keep its JSON (`_raw`, never a wire field)."""

    def dump(self) -> dict[str, Any]:
        """The wire JSON: wire names, the fields that were set (an explicit None stays `null`); a parsed value's
        own JSON."""
        raw = self.__dict__.get("_raw")
        if raw is not None:
            return raw  # type: ignore[no-any-return]
        cls = type(self)
        out: dict[str, Any] = {}
        for attr, wire in zip(cls.__struct_fields__, cls.__struct_encode_fields__, strict=True):
            value = getattr(self, attr)
            if value is not UNSET:
                out[wire] = dump(value)
        return out


def dump(value: Any) -> Any:
    """Wire JSON for a model, a list or dict of models, or a plain JSON value."""
    if isinstance(value, AcpModel):
        return value.dump()
    if isinstance(value, list):
        return [dump(item) for item in value]
    if isinstance(value, dict):
        return {key: dump(item) for key, item in value.items()}
    return value


def parse(model: Any, raw: Any) -> Any:
    """Validate raw JSON (wire names) as `model` (a model class, a union marker, or any type msgspec converts); a
    model keeps `raw` for `dump()`.

    Raises:
        ValidationError: the value does not fit the model.
    """
    value = msgspec.convert(raw, model, dec_hook=decode_hook)
    if isinstance(value, AcpModel) and isinstance(raw, dict):
        value.__dict__["_raw"] = raw
    return value


def decode_hook(kind: type, raw: Any) -> Any:
    """msgspec's hook for the union markers (the only custom types in the models)."""
    decode = getattr(kind, "decode", None)
    if decode is None:
        raise NotImplementedError(kind)
    return decode(raw)


class UnionMarker(abc.ABC):
    """Stands for a union msgspec cannot decode alone; never instantiated."""

    members: ClassVar[tuple[Any, ...]] = ()

    @classmethod
    @abc.abstractmethod
    def decode(cls, raw: Any) -> Any:
        """The member `raw` converts to. Raises ValueError / msgspec.ValidationError when none fits."""


def _marker(name: str, members: tuple[Any, ...], decode: Callable[[type[UnionMarker], Any], Any]) -> type[UnionMarker]:
    """A marker class whose virtual subclasses are its members (a generic member by its origin: `list`)."""
    marker = cast("type[UnionMarker]", type(name, (UnionMarker,), {"members": members, "decode": classmethod(decode)}))
    for member in members:
        origin = get_origin(member) or member
        if isinstance(origin, type):
            marker.register(origin)
    return marker


def tagged_union(
    name: str,
    tag: str,
    variants: Mapping[str, Any],
    *,
    other: type[AcpModel] | None = None,
    default: type[AcpModel] | None = None,
) -> type[UnionMarker]:
    """A union discriminated by the wire member `tag`: a known tag → its variant (strict; a variant may itself be a
    union on another tag), an unknown one → `other` (keeping its JSON) or else `default`, none → `default`."""

    def decode(cls: type[UnionMarker], raw: Any) -> Any:
        if not isinstance(raw, dict):
            raise ValueError(f"{name} must be an object")
        value = raw.get(tag)
        if value is None:
            if default is None:
                raise ValueError(f"{name} needs `{tag}`")
            return msgspec.convert(raw, default, dec_hook=decode_hook)
        variant = variants.get(value) if isinstance(value, str) else None
        if variant is not None:
            return msgspec.convert(raw, variant, dec_hook=decode_hook)
        if other is not None:
            found = msgspec.convert(raw, other, dec_hook=decode_hook)
            found.__dict__["_raw"] = raw
            return found
        if default is not None:
            return msgspec.convert(raw, default, dec_hook=decode_hook)
        raise ValueError(f"unknown {name} `{tag}`: {value!r}")

    return _marker(name, (*variants.values(), *(m for m in (other, default) if m is not None)), decode)


def plain_union(name: str, members: tuple[Any, ...]) -> type[UnionMarker]:
    """An untagged union msgspec cannot decode alone (two object or two array members): the member that fits and
    knows the most of the object's members wins, the first on a tie (pydantic's "smart" union, which the models
    used before)."""

    def decode(cls: type[UnionMarker], raw: Any) -> Any:
        best: tuple[int, Any] | None = None
        for member in members:
            try:
                value = msgspec.convert(raw, member, dec_hook=decode_hook)
            except msgspec.ValidationError:
                continue
            score = _known(member, raw)
            if best is None or score > best[0]:
                best = (score, value)
        if best is None:
            raise ValueError(f"no {name} variant fits")
        return best[1]

    return _marker(name, members, decode)


def _known(member: Any, raw: Any) -> int:
    if isinstance(raw, dict) and isinstance(member, type) and issubclass(member, msgspec.Struct):
        return len(raw.keys() & set(member.__struct_encode_fields__))
    return 0

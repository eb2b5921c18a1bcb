"""Externally tagged enums (serde's default) on top of pydantic.

An arm is a `Variant` subclass with a `TAG`. Its encoding depends on its shape:
- no fields: a unit variant, encoded as the bare string `TAG`;
- a `Newtype`: one field whose value is the whole payload, encoded as `{TAG: value}`;
- otherwise a struct variant, encoded as `{TAG: {fields…}}`.
`tagged(A, B, …)` builds the validator for a union of arms, accepting exactly these encodings.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import GetCoreSchemaHandler, SerializerFunctionWrapHandler, model_serializer
from pydantic_core import CoreSchema, core_schema
from pydantic_core.core_schema import SerializationInfo

from omniagent.protocols._model import WireModel


class Variant(WireModel):
    """One arm of an externally tagged enum."""

    TAG: ClassVar[str]

    @model_serializer(mode="wrap")
    def _encode(self, handler: SerializerFunctionWrapHandler) -> Any:
        fields = type(self).model_fields
        if not fields:
            return self.TAG
        body = handler(self)
        if isinstance(self, Newtype):
            (name,) = fields
            return {self.TAG: body[name]}
        return {self.TAG: body}


class Newtype(Variant):
    """An arm whose payload is one value (`{"Prompt":"p1"}`, `{"StatusChanged":"Idle"}`)."""


class tagged:
    """Validation and serialization for a union of `arms`: accepts exactly their encodings (or instances)."""

    def __init__(self, *arms: type[Variant]) -> None:
        self._arms = arms
        self._by_tag = {arm.TAG: arm for arm in arms}

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_plain_validator_function(
            self.decode,
            serialization=core_schema.plain_serializer_function_ser_schema(_encode_arm, info_arg=True),
        )

    def decode(self, value: Any) -> Variant:
        """One wire value (or an instance) to its arm; `ValueError` for anything else."""
        if isinstance(value, self._arms):
            return value
        if isinstance(value, str):
            arm = self._by_tag.get(value)
            if arm is not None and not arm.model_fields:
                return arm()
        elif isinstance(value, dict) and len(value) == 1:
            ((tag, body),) = value.items()
            arm = self._by_tag.get(tag)
            if arm is not None and arm.model_fields:
                if issubclass(arm, Newtype):
                    (name,) = arm.model_fields
                    return arm.model_validate({name: body})
                return arm.model_validate(body)
        raise ValueError(f"expected one of: {', '.join(self._by_tag)}")


def _encode_arm(value: Variant, info: SerializationInfo) -> Any:
    return value.model_dump(mode=info.mode)

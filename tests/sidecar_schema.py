"""The anyagent JSON schema as the oracle for every sidecar line our tests see."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]

# Kept in the package beside the models it specifies (its README says where it comes from).
SPEC = Path(__file__).resolve().parent.parent / "src" / "omniagent" / "protocols" / "sidecar" / "schema"
SPEC = SPEC / "anyagent-wire.schema.json"


@cache
def _validator(definition: str) -> jsonschema.Draft7Validator:
    schema = json.loads(SPEC.read_text())
    root = {"$ref": f"#/definitions/{definition}", "definitions": schema["definitions"]}
    return jsonschema.Draft7Validator(root)


def validate(definition: str, value: Any) -> None:
    """Raise if `value` is not a valid `definition` of the anyagent wire schema."""
    _validator(definition).validate(value)


def validate_line(value: Any) -> None:
    """Validate one output line, including the payload the schema leaves open (`ok`, `error`)."""
    validate("Line", value)
    if "event" in value:
        validate("Event", value["event"])
    if "error" in value:
        validate("ErrorBody", value["error"])

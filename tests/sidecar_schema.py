"""The anyagent JSON schema as the oracle for every sidecar line our tests see."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]


def _find_spec() -> Path:
    # CI clones the repo beside a copy of shared/; a developer's tree has it one level up from the repo.
    for base in Path(__file__).resolve().parents:
        candidate = base / "shared" / "spec" / "anyagent-wire.schema.json"
        if candidate.exists():
            return candidate
    raise FileNotFoundError("shared/spec/anyagent-wire.schema.json not found beside the repository")


@cache
def _validator(definition: str) -> jsonschema.Draft7Validator:
    schema = json.loads(_find_spec().read_text())
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

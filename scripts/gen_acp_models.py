"""Generate the ACP wire models (pydantic v2) from the JSON schemas in `src/omniagent/protocols/acp/schema/`.

    python scripts/gen_acp_models.py          # rewrite protocols/acp/v1.py and v2.py
    python scripts/gen_acp_models.py --check  # exit 1 if they are stale (CI, tests/test_generated.py)

The schemas are regular, so a small generator suffices (acp.md §6.1):
- an object definition becomes an `AcpModel` class (camelCase aliases, `_meta` → `meta`, extra fields kept);
- a union of string constants becomes `Literal[...]`, plus `| str` when the schema has an `other` fallback;
- a tagged union (`{tag: const} + allOf $ref`, maybe an `other` and an untagged default) becomes one flat class per
  variant and a discriminated alias: a known tag validates strictly against its variant, an unknown tag goes to the
  raw-preserving `...Other` class, a missing tag to the default variant;
- any other union becomes a plain (smart) union.
Method tables come from the `x-method` / `x-side` annotations. Output is deterministic (schema order).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import keyword
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "omniagent" / "protocols" / "acp"
TARGETS = (("acp-v1.schema.json", "v1.py", "1"), ("acp-v2.schema.json", "v2.py", "2"))

Schema = dict[str, Any]
# Builtins too: a field named `list` would shadow `list[...]` in the annotations after it.
_RESERVED = set(dir(BaseModel)) | {"model_config", "tag_fields", "list", "dict", "str", "int", "float", "bool"}


def camel(text: str) -> str:
    """`user_message_chunk` / `searchAndReplace` → `UserMessageChunk` / `SearchAndReplace`."""
    parts = re.split(r"[^0-9A-Za-z]+", text)
    return "".join(p[:1].upper() + p[1:] for p in parts if p)


def snake(name: str) -> str:
    """Python attribute name for a wire property."""
    if name == "_meta":
        return "meta"
    result = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower().replace("-", "_")
    if keyword.iskeyword(result) or result in _RESERVED:
        result += "_"
    return result


def first_line(schema: Schema) -> str:
    text = (schema.get("description") or "").strip().split("\n\n")[0].replace("\n", " ").strip()
    return text.replace("\\", "\\\\").replace('"""', "'''") or "ACP wire type."


class Generator:
    def __init__(self, schema: Schema) -> None:
        self.defs: dict[str, Schema] = schema["$defs"]
        self.classes: list[str] = []
        self.aliases: dict[str, tuple[str, set[str]]] = {}  # name → (code, alias names it needs at runtime)
        self.flattened = self.variant_only_bases(schema)

    def variant_only_bases(self, schema: Schema) -> set[str]:
        """Definitions used only as the `allOf` base of tagged-union variants: their fields live in the variants."""
        bases: set[str] = set()
        elsewhere: set[str] = set()

        def walk(node: Any, in_variant: bool) -> None:
            if isinstance(node, list):
                for item in node:
                    walk(item, in_variant)
            elif isinstance(node, dict):
                if "$ref" in node:
                    (bases if in_variant else elsewhere).add(node["$ref"].rsplit("/", 1)[1])
                members = node.get("anyOf") or node.get("oneOf")
                tagged = isinstance(members, list) and self.tag_of(members) is not None
                for key, value in node.items():
                    if key in ("anyOf", "oneOf") and tagged:
                        for member in value:
                            for sub_key, sub in member.items():
                                walk(sub, sub_key == "allOf")
                    elif key == "allOf" and in_variant:
                        for item in value:
                            walk(item, True)
                    else:
                        walk(value, False)

        walk(schema, False)
        return bases - elsewhere

    # --- definitions ---------------------------------------------------------------------------------------

    def run(self) -> None:
        for name, schema in self.defs.items():
            members = schema.get("anyOf") or schema.get("oneOf")
            if name in self.flattened:
                continue
            if members is None:
                if schema.get("type") == "object" or "properties" in schema:
                    props, required = self.collect(schema)
                    self.add_class(name, schema, props, required)
                else:
                    self.add_alias(name, self.ptype(schema))
            elif all(self.is_scalar_member(m) for m in members):
                self.add_enum(name, members)
            elif (tag := self.tag_of(members)) is not None:
                self.add_tagged(name, schema, members, tag)
            elif "properties" in schema:
                props, required = self.collect(schema)
                self.add_class(name, schema, props, required)
            else:
                self.add_plain_union(name, members)

    def add_alias(self, name: str, code: str) -> None:
        self.aliases[name] = (code, self.alias_refs(code))

    def add_enum(self, name: str, members: list[Schema]) -> None:
        consts = [m["const"] for m in members if "const" in m]
        others = [m.get("type", "string") for m in members if "const" not in m]
        parts = [f"Literal[{', '.join(repr(c) for c in consts)}]"] if consts else []
        parts += [{"string": "str", "integer": "int"}[t] for t in others]
        self.add_alias(name, " | ".join(parts))

    def add_plain_union(self, name: str, members: list[Schema]) -> None:
        parts: list[str] = []
        for member in members:
            if "properties" in member and "$ref" not in member and "allOf" not in member:
                cls = name + camel(member.get("title", f"Variant{len(parts)}"))
                props, required = self.collect(member)
                self.add_class(cls, member, props, required)
                parts.append(cls)
            else:
                parts.append(self.ptype(member))
        self.add_alias(name, join_union(parts))

    def add_tagged(
        self,
        name: str,
        schema: Schema,
        members: list[Schema],
        tag: str,
        *,
        outer: tuple[tuple[str, str], ...] = (),
        outer_props: dict[str, Schema] | None = None,
        outer_required: frozenset[str] = frozenset(),
    ) -> None:
        """One class per variant plus the discriminated alias. `outer` carries the enclosing union's tags when a
        variant's base is itself a tagged union (`sessionUpdate: "state_update"` + `state: "idle"`)."""
        own_props, own_required = self.own_props(schema)
        base_props = {**(outer_props or {}), **own_props}
        base_required = set(outer_required) | own_required
        choices: list[tuple[str, str]] = []  # (class or alias, discriminator tag)
        known: list[str] = []
        default: str | None = None
        other = False
        for member in members:
            const = member.get("properties", {}).get(tag, {}).get("const")
            inner = self.inner_union(member)
            if const is not None and inner is not None:
                inner_schema, inner_members, inner_tag = inner
                cls = name + camel(const)
                self.add_tagged(
                    cls,
                    inner_schema,
                    inner_members,
                    inner_tag,
                    outer=(*outer, (tag, const)),
                    outer_props=base_props,
                    outer_required=frozenset(base_required),
                )
                choices.append((cls, const))
                known.append(const)
                continue
            props, required = self.collect(member)
            merged = {**base_props, **props}
            needed = base_required | required
            if const is not None:
                cls = name + camel(const)
                self.add_class(cls, member, merged, needed, tags=(*outer, (tag, const)), fallback=schema)
                choices.append((cls, const))
                known.append(const)
            elif member.get("title") == "other":
                cls = name + "Other"
                self.add_class(cls, member, merged, needed, tags=outer, fallback=schema)
                choices.append((cls, "~other"))
                other = True
            else:
                cls = name + camel(member.get("title", "Default"))
                merged.pop(tag, None)
                self.add_class(cls, member, merged, needed - {tag}, tags=outer, fallback=schema)
                default = "~default"
                choices.append((cls, default))
        if len(choices) == 1:
            self.add_alias(name, choices[0][0])
            return
        arms = "\n    | ".join(f"Annotated[{cls}, Tag({value!r})]" for cls, value in choices)
        picker = f"tag_picker({tag!r}, {snake(tag)!r}, {tuple(known)!r}, other={other}, default={default!r})"
        self.add_alias(name, f"Annotated[\n    {arms},\n    Discriminator({picker}),\n]")

    def inner_union(self, member: Schema) -> tuple[Schema, list[Schema], str] | None:
        """The tagged union a variant is based on, if its single `allOf` base is one."""
        bases = member.get("allOf", [])
        if len(bases) != 1 or "$ref" not in bases[0]:
            return None
        base = self.resolve(bases[0])
        members = base.get("anyOf") or base.get("oneOf")
        tag = self.tag_of(members) if isinstance(members, list) else None
        if members is None or tag is None:
            return None
        return base, members, tag

    def add_class(
        self,
        name: str,
        schema: Schema,
        props: dict[str, Schema],
        required: set[str],
        *,
        tags: tuple[tuple[str, str], ...] = (),
        fallback: Schema | None = None,
    ) -> None:
        doc = first_line(schema if schema.get("description") or fallback is None else fallback)
        lines = [f"class {name}(AcpModel):", f'    """{doc}"""', ""]
        if tags:
            names = "".join(f"{snake(wire)!r}, " for wire, _ in tags)
            lines.append(f"    tag_fields: ClassVar[tuple[str, ...]] = ({names.rstrip(' ')})")
        for wire, value in tags:
            lines.append(f"    {snake(wire)}: Literal[{value!r}] = Field(default={value!r}, alias={wire!r})")
        tag_names = {wire for wire, _ in tags}
        for prop, prop_schema in props.items():
            if prop not in tag_names:
                lines.append(self.field(prop, prop_schema, prop in required))
        self.classes.append("\n".join(lines))

    def field(self, prop: str, schema: Schema, required: bool) -> str:
        attr, kind = snake(prop), self.ptype(schema)
        alias = f"alias={prop!r}" if attr != prop else ""
        if required:
            return f"    {attr}: {kind}" + (f" = Field({alias})" if alias else "")
        if not kind.endswith("| None") and kind not in ("Any", "None"):
            kind += " | None"
        return f"    {attr}: {kind} = " + (f"Field(default=None, {alias})" if alias else "None")

    # --- schema reading ------------------------------------------------------------------------------------

    @staticmethod
    def is_scalar_member(member: Schema) -> bool:
        return "const" in member or (
            member.get("title") in ("other", "unknown", "Other") and member.get("type") in ("string", "integer")
        )

    @staticmethod
    def tag_of(members: list[Schema]) -> str | None:
        for member in members:
            if not isinstance(member, dict):
                return None
            for prop, schema in member.get("properties", {}).items():
                if isinstance(schema, dict) and "const" in schema:
                    return str(prop)
        return None

    def resolve(self, schema: Schema) -> Schema:
        return self.defs[schema["$ref"].rsplit("/", 1)[1]] if "$ref" in schema else schema

    def own_props(self, schema: Schema) -> tuple[dict[str, Schema], set[str]]:
        return dict(schema.get("properties", {})), set(schema.get("required", []))

    def collect(self, schema: Schema) -> tuple[dict[str, Schema], set[str]]:
        """Properties of an object schema, flattening `allOf` refs; untagged `anyOf` members add optional ones."""
        schema = self.resolve(schema)
        props: dict[str, Schema] = {}
        required: set[str] = set()
        for sub in schema.get("allOf", []):
            sub_props, sub_required = self.collect(sub)
            props.update(sub_props)
            required |= sub_required
        own, own_required = self.own_props(schema)
        props.update(own)
        required |= own_required
        members = schema.get("anyOf") or schema.get("oneOf") or []
        if members and self.tag_of(members) is None:
            for member in members:
                for prop, prop_schema in self.collect(member)[0].items():
                    props.setdefault(prop, prop_schema)
        return props, required

    def ptype(self, schema: Schema) -> str:
        if "$ref" in schema:
            return str(schema["$ref"].rsplit("/", 1)[1])
        if "allOf" in schema and len(schema["allOf"]) == 1:
            return self.ptype(schema["allOf"][0])
        if "const" in schema:
            return f"Literal[{schema['const']!r}]"
        members = schema.get("anyOf") or schema.get("oneOf")
        if members:
            return join_union([self.ptype(m) for m in members])
        kind = schema.get("type")
        if isinstance(kind, list):
            return join_union([self.ptype({**schema, "type": k}) for k in kind])
        if kind == "array":
            return f"list[{self.ptype(schema['items']) if 'items' in schema else 'Any'}]"
        if kind == "object":
            extra = schema.get("additionalProperties")
            value = self.ptype(extra) if isinstance(extra, dict) and extra else "Any"
            return f"dict[str, {value}]"
        return {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}.get(
            str(kind), "Any"
        )

    def alias_refs(self, code: str) -> set[str]:
        return {word for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code) if word in self.defs}

    # --- output --------------------------------------------------------------------------------------------

    def methods(self) -> str:
        requests: dict[str, dict[str, list[str]]] = {"agent": {}, "client": {}}
        notifications: dict[str, dict[str, str]] = {"agent": {}, "client": {}, "protocol": {}}
        for name, schema in self.defs.items():
            method, side = schema.get("x-method"), schema.get("x-side")
            if not isinstance(method, str) or not isinstance(side, str):
                continue
            sides = ["agent", "client"] if side == "both" else [side]
            for one in sides:
                if name.endswith("Notification"):
                    notifications[one][method] = name
                elif name.endswith("Request"):
                    requests[one].setdefault(method, ["None", "None"])[0] = name
                elif name.endswith("Response"):
                    requests[one].setdefault(method, ["None", "None"])[1] = name
        out = []
        for side in ("agent", "client"):
            out.append(f"# Requests the {side} answers: method → (params, result).")
            out.append(f"{side.upper()}_REQUESTS: dict[str, tuple[Any, Any]] = {{")
            out += [f"    {m!r}: ({p}, {r})," for m, (p, r) in requests[side].items()]
            out.append("}")
        for side in ("agent", "client", "protocol"):
            who = "either side" if side == "protocol" else f"the {side}"
            out.append(f"# Notifications {who} handles: method → params.")
            out.append(f"{side.upper()}_NOTIFICATIONS: dict[str, Any] = {{")
            out += [f"    {m!r}: {p}," for m, p in notifications[side].items()]
            out.append("}")
        return "\n".join(out)

    def ordered_aliases(self) -> list[str]:
        done: set[str] = set()
        out: list[str] = []

        def visit(name: str) -> None:
            if name in done or name not in self.aliases:
                return
            done.add(name)
            code, deps = self.aliases[name]
            for dep in sorted(deps):
                visit(dep)
            out.append(f"{name}: TypeAlias = {code}")

        for name in self.aliases:
            visit(name)
        return out


def join_union(parts: list[str]) -> str:
    unique = list(dict.fromkeys(parts))
    if "Any" in unique:
        return "Any"
    if "None" in unique:
        unique = [p for p in unique if p != "None"] + ["None"]
    return " | ".join(unique)


def render(schema_name: str, version: str) -> str:
    raw = (PACKAGE / "schema" / schema_name).read_bytes()
    gen = Generator(json.loads(raw))
    gen.run()
    header = [
        f"# Generated from src/omniagent/protocols/acp/schema/{schema_name} by scripts/gen_acp_models.py; do not edit.",
        f"# Schema sha256: {hashlib.sha256(raw).hexdigest()}",
        "# ruff: noqa: E501",
        f'"""ACP v{version} wire models, one class per schema object; unions are discriminated aliases."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Annotated, Any, ClassVar, Literal, TypeAlias",
        "",
        "from pydantic import Discriminator, Field, Tag",
        "",
        "from omniagent.protocols.acp._base import AcpModel, tag_picker",
        "",
        f"PROTOCOL_VERSION = {version}",
    ]
    parts = ["\n".join(header), "\n\n\n".join(gen.classes), "\n".join(gen.ordered_aliases()), gen.methods()]
    return ruff_format("\n\n\n".join(parts) + "\n")


def ruff_format(source: str) -> str:
    """Format with the pinned ruff (test extra), so the output is stable and passes `ruff format --check`."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", "generated.py", "-"],
        input=source,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale")
    args = parser.parse_args(argv)
    stale = []
    for schema_name, target, version in TARGETS:
        text = render(schema_name, version)
        path = PACKAGE / target
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text)
    if stale:
        print(f"stale: {', '.join(stale)}; run: python scripts/gen_acp_models.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Generate the ACP wire models (`msgspec.Struct`s) from the JSON schemas in `src/omniagent/protocols/acp/schema/`.

    python scripts/gen_acp_models.py          # rewrite protocols/acp/v1.py and v2.py
    python scripts/gen_acp_models.py --check  # exit 1 if they are stale (CI, tests/test_generated.py)

The schemas are regular, so a small generator suffices:
- an object definition becomes an `AcpModel` Struct (snake_case attributes named as on the wire, `_meta` → `meta`,
  optional fields `UNSET` until set);
- a union of string constants becomes `Literal[...]`, plus `| str` when the schema has an `other` fallback;
- a tagged union (`{tag: const} + allOf $ref`, maybe an `other` and an untagged default) becomes one flat class per
  variant and a `tagged_union` marker: a known tag validates strictly against its variant, an unknown tag goes to the
  raw-preserving `...Other` class, a missing tag to the default variant;
- any other union is a plain union when msgspec decodes it alone (at most one object and one array member), else a
  `plain_union` marker (the best-fitting member). Mypy sees every marker as the union it stands for.
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

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "omniagent" / "protocols" / "acp"
TARGETS = (("acp-v1.schema.json", "v1.py", "1"), ("acp-v2.schema.json", "v2.py", "2"))

Schema = dict[str, Any]
# Builtins too: a field named `list` would shadow `list[...]` in the annotations after it.
_RESERVED = {"dump", "list", "dict", "str", "int", "float", "bool"}


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
        # name → (code mypy sees, code run instead when it differs (a union marker), alias names it needs at runtime)
        self.aliases: dict[str, tuple[str, str | None, set[str]]] = {}
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
                    if (code := self.ptype(schema, name)) != name:
                        self.add_alias(name, code)
            elif all(self.is_scalar_member(m) for m in members):
                self.add_enum(name, members)
            elif (tag := self.tag_of(members)) is not None:
                self.add_tagged(name, schema, members, tag)
            elif "properties" in schema:
                props, required = self.collect(schema)
                self.add_class(name, schema, props, required)
            else:
                self.add_plain_union(name, members)

    def add_alias(self, name: str, code: str, runtime: str | None = None) -> None:
        self.aliases[name] = (code, runtime, self.alias_refs(code if runtime is None else f"{code} {runtime}"))

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
                parts.append(self.ptype(member, name))
        code = self.union(parts, self.member_kinds(members), name)
        if code != name:
            self.add_alias(name, code)

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
        choices: list[tuple[str, str]] = []  # (class or alias, discriminator tag; `~…` for other and default)
        default: str | None = None
        other: str | None = None
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
                continue
            props, required = self.collect(member)
            merged = {**base_props, **props}
            needed = base_required | required
            if const is not None:
                cls = name + camel(const)
                self.add_class(cls, member, merged, needed, tags=(*outer, (tag, const)), fallback=schema)
                choices.append((cls, const))
            elif member.get("title") == "other":
                cls = other = name + "Other"
                self.add_class(cls, member, merged, needed, tags=outer, fallback=schema)
                choices.append((cls, "~other"))
            else:
                cls = name + camel(member.get("title", "Default"))
                merged.pop(tag, None)
                self.add_class(cls, member, merged, needed - {tag}, tags=outer, fallback=schema)
                default = cls
                choices.append((cls, "~default"))
        if len(choices) == 1:
            self.add_alias(name, choices[0][0])
            return
        variants = ", ".join(f"{value!r}: {cls}" for cls, value in choices if not value.startswith("~"))
        runtime = f"tagged_union({name!r}, {tag!r}, {{{variants}}}, other={other}, default={default})"
        self.add_alias(name, " | ".join(cls for cls, _ in choices), runtime)

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
        lines = [f"class {name}(AcpModel, frozen=True, kw_only=True):", f'    """{doc}"""', ""]
        for wire, value in tags:
            lines.append(f"    {snake(wire)}: Literal[{value!r}] = {self.default(wire, repr(value))}")
        tag_names = {wire for wire, _ in tags}
        for prop, prop_schema in props.items():
            if prop not in tag_names:
                lines.append(self.field(name, prop, prop_schema, prop in required))
        self.classes.append("\n".join(lines))

    def field(self, owner: str, prop: str, schema: Schema, required: bool) -> str:
        attr, kind = snake(prop), self.ptype(schema, owner + camel(prop))
        if required:
            return f"    {attr}: {kind}" + (f" = msgspec.field(name={prop!r})" if attr != prop else "")
        if kind != "Any":
            base = "" if kind == "None" else kind.removesuffix(" | None")  # a trailing `| None` is top-level
            kind = f"{base} | UnsetType | None" if base else "UnsetType | None"
        return f"    {attr}: {kind} = {self.default(prop, 'UNSET')}"

    @staticmethod
    def default(prop: str, value: str) -> str:
        return value if snake(prop) == prop else f"msgspec.field(default={value}, name={prop!r})"

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

    def ptype(self, schema: Schema, hint: str) -> str:
        """The annotation for `schema`; `hint` names the union marker an inline union may need."""
        if "$ref" in schema:
            return str(schema["$ref"].rsplit("/", 1)[1])
        if "allOf" in schema and len(schema["allOf"]) == 1:
            return self.ptype(schema["allOf"][0], hint)
        if "const" in schema:
            return f"Literal[{schema['const']!r}]"
        members = schema.get("anyOf") or schema.get("oneOf")
        if members:
            return self.union([self.ptype(m, hint) for m in members], self.member_kinds(members), hint)
        kind = schema.get("type")
        if isinstance(kind, list):
            return join_union([self.ptype({**schema, "type": k}, hint) for k in kind])
        if kind == "array":
            return f"list[{self.ptype(schema['items'], hint + 'Item') if 'items' in schema else 'Any'}]"
        if kind == "object":
            extra = schema.get("additionalProperties")
            value = self.ptype(extra, hint + "Value") if isinstance(extra, dict) and extra else "Any"
            return f"dict[str, {value}]"
        return {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}.get(
            str(kind), "Any"
        )

    def union(self, parts: list[str], kinds: list[str], hint: str) -> str:
        """A union msgspec decodes alone, or a `plain_union` marker named `hint` (`| None` kept outside it)."""
        if "any" in kinds:
            return "Any"
        if native(kinds):
            return join_union(parts)
        members = [p for p in dict.fromkeys(parts) if p != "None"]
        self.add_alias(hint, join_union(members), f"plain_union({hint!r}, ({', '.join(members)},))")
        return hint + (" | None" if "None" in parts else "")

    def member_kinds(self, members: list[Schema]) -> list[str]:
        return [kind for member in members for kind in self.kinds(member, frozenset())]

    def kinds(self, schema: Schema, seen: frozenset[str]) -> list[str]:
        """What msgspec sees of `schema`'s annotation, one entry per union member: object, array, custom (a union
        marker), str, int, float, bool, none or any."""
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[1]
            return ["object"] if name in seen else self.def_kinds(name, seen | {name})
        if "allOf" in schema and len(schema["allOf"]) == 1:
            return self.kinds(schema["allOf"][0], seen)
        if "const" in schema:
            return ["str" if isinstance(schema["const"], str) else "int"]
        members = schema.get("anyOf") or schema.get("oneOf")
        if members:
            inner = [kind for member in members for kind in self.kinds(member, seen)]
            return inner if "any" in inner or native(inner) else ["custom"] + (["none"] if "none" in inner else [])
        if "properties" in schema:
            return ["object"]
        kind = schema.get("type")
        if isinstance(kind, list):
            return [k for one in kind for k in self.kinds({**schema, "type": one}, seen)]
        names = {"array": "array", "object": "object", "string": "str", "integer": "int", "number": "float"}
        return [{**names, "boolean": "bool", "null": "none"}.get(str(kind), "any")]

    def def_kinds(self, name: str, seen: frozenset[str]) -> list[str]:
        schema = self.defs[name]
        members = schema.get("anyOf") or schema.get("oneOf")
        if members is None:
            return self.kinds(schema, seen)
        if all(self.is_scalar_member(m) for m in members):
            return ["int" if all(isinstance(m.get("const", 0), int) for m in members) else "str"]
        if self.tag_of(members) is not None:
            return ["custom"] if len(members) > 1 else ["object"]
        if "properties" in schema:
            return ["object"]
        return self.kinds({"anyOf": members}, seen)

    def alias_refs(self, code: str) -> set[str]:
        return {
            word for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code) if word in self.defs or word in self.aliases
        }

    # --- output --------------------------------------------------------------------------------------------

    def methods(self) -> str:
        requests: dict[str, dict[str, list[str]]] = {"agent": {}, "client": {}}
        notifications: dict[str, dict[str, str]] = {"agent": {}, "client": {}, "protocol": {}}
        for name, schema in self.defs.items():
            method, side = schema.get("x-method"), schema.get("x-side")
            if not isinstance(method, str) or not isinstance(side, str):
                continue
            # `proxy` methods (proxy chains) are neither an agent's nor a client's: no table holds them.
            sides = ["agent", "client"] if side == "both" else [side] if side in notifications else []
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
        """Aliases after the aliases they use (they run: msgspec reads them); a marker is a union for mypy."""
        done: set[str] = set()
        out: list[str] = []

        def visit(name: str) -> None:
            if name in done or name not in self.aliases:
                return
            done.add(name)
            code, runtime, deps = self.aliases[name]
            for dep in sorted(deps):
                visit(dep)
            if runtime is None:
                out.append(f"{name}: TypeAlias = {code}")
            else:
                out.append(f"if TYPE_CHECKING:\n    {name}: TypeAlias = {code}\nelse:\n    {name} = {runtime}")

        for name in self.aliases:
            visit(name)
        return out


def native(kinds: list[str]) -> bool:
    """Whether msgspec decodes a union of these kinds alone (at most one object and one array; a custom type only
    with None)."""
    if "custom" in kinds:
        return all(kind in ("custom", "none") for kind in kinds) and kinds.count("custom") == 1
    return kinds.count("object") <= 1 and kinds.count("array") <= 1


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
        f'"""ACP v{version} wire models, one Struct per schema object; unions msgspec cannot decode are markers."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import TYPE_CHECKING, Any, Literal, TypeAlias",
        "",
        "import msgspec",
        "",
        "from omniagent.protocols.acp._base import UNSET, AcpModel, UnsetType, plain_union, tagged_union",
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

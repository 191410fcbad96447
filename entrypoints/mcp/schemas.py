"""JSON Schemas of tools, generated from the msgspec Structs of ``entrypoints.methods``.

MCP clients want each schema as one self-contained object with ``"type": "object"`` at
the top; msgspec answers ``{"$ref": "#/$defs/X", "$defs": {...}}``. ``self_contained``
inlines every ``$ref`` (our Structs are not recursive: a cycle raises ``ValueError``)
and drops the Struct names msgspec puts in ``title``.

A tool listing is read on every session, so ``compact`` writes the same constraints in
fewer bytes: ``anyOf: [X, {"type": "null"}]`` becomes ``X`` with ``"null"`` added to its
type or enum, ``"default": null`` goes (``required`` already says what may be left out),
and so do the Struct docstrings msgspec copies into ``description`` (written for this
code's readers; what the agent reads is in each method's description and ``texts``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

PROJECT_FIELD = "projectId"

Schema = dict[str, Any]


def self_contained(struct: type) -> Schema:
    raw = msgspec.json.schema(struct)
    return _inline(raw, raw.get("$defs", {}), ())


def _inline(node: Any, defs: Mapping[str, Schema], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in seen:
            raise ValueError(f"recursive schema: {' -> '.join((*seen, name))}")
        target = {k: v for k, v in defs[name].items() if k != "title"}
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return {**_inline(target, defs, (*seen, name)), **_inline(rest, defs, seen)}
    return {k: _inline(v, defs, seen) for k, v in node.items() if k != "$defs"}


def compact(node: Any) -> Any:
    """The same schema, shorter (see the module's docstring)."""
    if isinstance(node, list):
        return [compact(item) for item in node]
    if not isinstance(node, dict):
        return node
    shorter = {k: compact(v) for k, v in node.items() if k != "description" and not (k == "default" and v is None)}
    if "properties" in node:  # property names, not keywords
        shorter["properties"] = {name: compact(prop) for name, prop in node["properties"].items()}
    branches = shorter.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
        other = next(b for b in branches if b != {"type": "null"})
        rest = {k: v for k, v in shorter.items() if k != "anyOf"}
        if isinstance(other.get("type"), str) and not rest.keys() & other.keys():
            return {**rest, **other, "type": [other["type"], "null"]}
        if isinstance(other.get("enum"), list) and len(other) == 1 and "enum" not in rest:
            return {**rest, "enum": [*other["enum"], None]}
    return shorter


def with_optional_project(schema: Any) -> Any:
    """A copy in which no object requires ``projectId``: the server fills in its own."""
    if isinstance(schema, list):
        return [with_optional_project(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    copy = {k: with_optional_project(v) for k, v in schema.items()}
    if PROJECT_FIELD in copy.get("properties", {}) and PROJECT_FIELD in copy.get("required", ()):
        copy["required"] = [r for r in copy["required"] if r != PROJECT_FIELD]
    return copy


def describe_fields(schema: Schema, descriptions: Mapping[str, str]) -> Schema:
    """A copy whose top-level properties carry the matching description."""
    properties = {
        name: {"description": descriptions[name], **prop} if name in descriptions and "description" not in prop else prop
        for name, prop in schema.get("properties", {}).items()
    }
    return {**schema, "properties": properties}


def fill_project(arguments: Any, schema: Schema, project: str) -> Any:
    """``arguments`` with ``projectId`` set to ``project`` in every object the schema gives
    a ``projectId`` property and the caller left it out (an explicit null stays null)."""
    if isinstance(arguments, dict) and isinstance(schema.get("properties"), dict):
        properties = schema["properties"]
        filled = {k: fill_project(v, properties[k], project) if k in properties else v for k, v in arguments.items()}
        if PROJECT_FIELD in properties and PROJECT_FIELD not in filled:
            filled[PROJECT_FIELD] = project
        return filled
    if isinstance(arguments, list) and isinstance(schema.get("items"), dict):
        return [fill_project(item, schema["items"], project) for item in arguments]
    return arguments

"""behavegate's own JSON formats (run records, shard reports, baselines) read by their types.

A format is a tree of ``msgspec.Struct`` types whose annotations are the whole shape:
types, required keys, lengths and bounds (``msgspec.Meta``), and where a plain
description reads better than the generated one, ``Meta(description=...)``. msgspec
decides: it decodes a valid document straight into those types. Only a refused one is
checked again, by ``jsonschema`` against ``msgspec.json.schema`` of the same types, to
list every problem (up to a cap, sorted by JSON path), worded here from the schema, never
from either library's error text, so the messages stay the same across their versions.
Where JSON Schema is looser than msgspec (1.0 is an integer to it, and equal to 1 in an
enum), the validator takes msgspec's side, so a problem is listed exactly when msgspec
refuses (tests/test_json_format_problems.py checks it on mutated real documents).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any, TypeVar, cast

import msgspec
import msgspec.inspect as mi
from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.protocols import Validator
from referencing import Registry

from behavegate import finite_json
from behavegate.errors import Problem
from behavegate.text import one_line

T = TypeVar("T")
JsonPath = tuple[str | int, ...]  # a JSON path, as jsonschema gives it
_SCANNED = 1_000  # errors read from one document (a hostile one may hold millions): the first found are listed


class Refused(Exception):
    """The document is JSON but not of the format: ``raw`` is what it holds, and every
    problem found (at most the cap), each ``Problem(text, path)``."""

    def __init__(self, raw: Any, problems: tuple[Problem, ...]) -> None:
        super().__init__(problems[0].text if problems else "refused")
        self.raw = raw
        self.problems = problems


class NotJSON(ValueError):
    """The text is not JSON (or holds a value JSON has no way to write)."""


def decode(text: str | bytes, schema: type[T], max_problems: int = 20) -> T:
    """``text`` as ``schema``; raises NotJSON, or Refused with its problems."""
    try:
        return msgspec.json.decode(text, type=schema)
    except msgspec.DecodeError:  # not JSON, or (its subclass ValidationError) not of the format
        pass
    try:
        raw = finite_json.loads_document(text)
    except (ValueError, RecursionError) as exc:
        raise NotJSON(one_line(str(exc), 200)) from None
    raise Refused(raw, _listed(raw, schema, max_problems))


def problems(value: Any, schema: Any, limit: int = 20) -> tuple[Problem, ...]:
    """Every way ``value`` (decoded JSON) departs from ``schema``, at most ``limit``;
    none when msgspec converts it (strictly, as it decodes JSON)."""
    try:
        msgspec.convert(value, type=schema)
    except msgspec.ValidationError:
        return _listed(value, schema, limit)
    except UnicodeEncodeError:  # a key with an unpaired surrogate, which msgspec cannot match to a field
        return _listed(value, schema, limit, "holds an unpaired surrogate escape, which no UTF-8 text can carry")
    return ()


def _listed(raw: Any, schema: Any, limit: int, why: str = "is not valid as this format") -> tuple[Problem, ...]:
    found: dict[tuple[JsonPath, str], None] = {}  # ordered, without repeats
    whole: set[JsonPath] = set()  # nodes refused as a whole (their length): their insides are not listed
    for path, text, as_whole in _worded(islice(_validator(schema).iter_errors(raw), _SCANNED)):
        found[path, text] = None
        if as_whole:
            whole.add(path)
    kept = [(path, text) for path, text in found if not any(path[:n] in whole for n in range(len(path)))]
    kept.sort(key=lambda item: [(0, step, "") if isinstance(step, int) else (1, 0, step) for step in item[0]])
    listed = tuple(_problem(path, text) for path, text in kept[:limit])
    # msgspec refused what the schema accepts (a rule JSON Schema cannot write): never say nothing
    return listed or (Problem(why),)


def _problem(path: JsonPath, text: str) -> Problem:
    where = _dotted(path)
    return Problem(f"{where} {text}" if where else text, where)


def _dotted(path: Iterable[str | int]) -> str:
    where = ""
    for step in path:
        # a key is untrusted text too: shown inert, short, and writable (a lone surrogate escaped)
        key = str(step) if isinstance(step, int) else one_line(step.encode("utf-8", "backslashreplace").decode(), 60)
        where += f"[{key}]" if isinstance(step, int) else (f".{key}" if where else key)
    return where


# --- the validator: Draft 2020-12, as strict as msgspec --------------------------------------


def _strict_enum(validator: Any, enums: list[Any], instance: Any, schema: Any) -> Iterator[ValidationError]:
    """``Literal[1]`` takes the integer 1, not 1.0 or true (JSON Schema's enum takes 1.0)."""
    if not any(type(instance) is type(value) and instance == value for value in enums):
        yield ValidationError(f"{instance!r} is not one of {enums!r}")


# msgspec's int is a JSON integer written without a fraction or exponent: 1.0 is a float
_STRICT_TYPES = Draft202012Validator.TYPE_CHECKER.redefine("integer", lambda _, value: type(value) is int)
_REF = Draft202012Validator.VALIDATORS["$ref"]
_VALIDATORS: dict[Any, Validator] = {}  # compiled once per format


def _validator(schema: Any) -> Validator:
    found = _VALIDATORS.get(schema)
    if found is None:
        document = msgspec.json.schema(schema)
        structs = _structs(schema, document)

        def ref(validator: Any, target: str, instance: Any, node: Any) -> Iterator[ValidationError]:
            """A struct msgspec converts has no problem: only a refused one is walked (the
            listing of a large refused document walks only the parts that hold problems)."""
            struct = structs.get(target)
            if struct is not None:
                try:
                    msgspec.convert(instance, type=struct)
                    return
                except (msgspec.ValidationError, UnicodeEncodeError):
                    pass
            yield from _REF(validator, target, instance, node)

        kind_of = validators.extend(  # type: ignore[no-untyped-call]  # jsonschema leaves it unannotated
            Draft202012Validator, validators={"enum": _strict_enum, "$ref": ref}, type_checker=_STRICT_TYPES
        )
        # msgspec's schema refers only to its own $defs: an empty registry fetches nothing
        found = _VALIDATORS[schema] = kind_of(document, registry=Registry())
    return found


def _structs(schema: Any, document: dict[str, Any]) -> dict[str, type]:
    """Each untagged struct of the format by the ``$ref`` msgspec's schema names it with (its
    class name; a name two structs share is left out, checked by the schema alone)."""
    found: dict[str, list[type]] = {}
    stack, seen = [mi.type_info(schema)], set()
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if isinstance(t, mi.StructType):
            # a tagged struct converts without its tag, which a union of them requires: left out
            found.setdefault(t.cls.__name__, []).append(t.cls if t.tag_field is None else type(None))
            stack.extend(f.type for f in t.fields)
        elif isinstance(t, mi.Metadata | mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
            stack.append(t.type if isinstance(t, mi.Metadata) else t.item_type)
        elif isinstance(t, mi.TupleType | mi.UnionType):
            stack.extend(t.item_types if isinstance(t, mi.TupleType) else t.types)
        elif isinstance(t, mi.DictType):
            stack.extend((t.key_type, t.value_type))
    names = document.get("$defs", {})
    unique = {name: types[0] for name, types in found.items() if len(set(types)) == 1 and types[0] is not type(None)}
    return {f"#/$defs/{name}": struct for name, struct in unique.items() if name in names}


# --- jsonschema's errors, in behavegate's words ----------------------------------------------


def _worded(
    errors: Iterable[ValidationError], described: str = "", at: JsonPath | None = None
) -> Iterator[tuple[JsonPath, str, bool]]:
    """(path, text) of each error; ``described`` words the node at ``at`` (a union's member)."""
    for error in errors:
        path = tuple(error.absolute_path)
        yield from _one(error, path, described if path == at else "")


def _one(error: ValidationError, path: JsonPath, described: str) -> Iterator[tuple[JsonPath, str, bool]]:
    keyword, node, value = error.validator, error.schema, cast(Any, error.instance)
    if not isinstance(node, dict):
        return
    described = described or _description(node)
    if keyword in ("anyOf", "oneOf"):
        yield from _union(error, node, path, described)
    elif keyword == "required":
        for key in node["required"]:
            if key not in value:
                yield (*path, key), "is missing", False
    elif keyword == "additionalProperties":
        known = ", ".join(sorted(node.get("properties", {})))
        for key in value:
            if key not in node.get("properties", {}):
                yield (*path, key), f"is unknown here (the keys are {known})", False
    elif keyword in ("minItems", "maxItems", "items") and "prefixItems" in node:
        yield path, f"must be {described or _wording(node)}, got {len(value)} items", True
    elif keyword == "maxItems":
        yield path, f"must have at most {node['maxItems']} entries, got {len(value)}", True
    elif keyword == "minItems":
        yield path, f"must have at least {node['minItems']} entries, got {len(value)}", True
    elif keyword == "maxProperties":
        yield path, f"must have at most {node['maxProperties']} keys, got {len(value)}", True
    else:  # type, enum, pattern, a length or a bound: what the value must be, and what it is
        yield path, f"must be {described or _wording(node)}, got {kind(value)}", False


def _union(error: ValidationError, node: dict[str, Any], path: JsonPath, described: str) -> Iterator[tuple[JsonPath, str, bool]]:
    members: list[dict[str, Any]] = node[str(error.validator)]
    nullable = {"type": "null"} in members
    chosen = [index for index, member in enumerate(members) if member != {"type": "null"}]
    branch = {index: [e for e in error.context or () if e.relative_schema_path[0] == index] for index in chosen}
    tags = node.get("discriminator")
    if tags:  # a tagged union: the tag says which struct the object is checked against
        value, field = cast(Any, error.instance), tags["propertyName"]
        if type(value) is not dict:
            yield path, f"must be {described or 'a JSON object'}, got {kind(value)}", False
        elif field not in value:
            yield (*path, field), "is missing", False
        elif not isinstance(value[field], str) or value[field] not in tags["mapping"]:
            yield (*path, field), f"must be {_either(list(tags['mapping']))}, got {kind(value[field])}", False
        else:
            ref = tags["mapping"][value[field]]
            yield from _worded(branch[next(i for i in chosen if members[i].get("$ref") == ref)])
    elif len(chosen) == 1:  # the usual case, ``X | None``: X's own problems, saying "or null"
        inner = described or _wording(members[chosen[0]])
        yield from _worded(branch[chosen[0]], f"{inner} or null" if nullable else inner, path)
    else:
        words = [_wording(members[i]) for i in chosen] + (["null"] if nullable else [])
        yield path, f"must be {described or _either(words)}, got {kind(error.instance)}", False


def _description(node: dict[str, Any]) -> str:
    """Our own words for a node (``Meta(description=...)``); a struct's docstring is not one."""
    return "" if "title" in node else str(node.get("description", ""))


def _wording(node: dict[str, Any]) -> str:
    """What a value of the schema ``node`` is, in a person's words."""
    if _description(node):
        return _description(node)
    if "enum" in node:
        return _either([v if isinstance(v, str) else json.dumps(v) for v in node["enum"]])
    if "anyOf" in node:
        return _either([_wording(m) for m in node["anyOf"]])
    kind_of = node.get("type")
    if kind_of == "string":
        text = "a non-empty string" if node.get("minLength") == 1 else "a string"
        return text + (f" of at most {node['maxLength']} characters" if "maxLength" in node else "")
    if kind_of in ("integer", "number"):
        return _number(node)
    if kind_of == "array":
        return f"a list of {len(node['prefixItems'])} items" if "prefixItems" in node else "a list"
    named = {"boolean": "true or false", "null": "null", "object": "a JSON object"}
    # msgspec writes a struct as {"$ref": "#/$defs/Name"}
    return named.get(str(kind_of), "a JSON object" if "$ref" in node else "any JSON value")


def _number(node: dict[str, Any]) -> str:
    noun = "a whole number" if node.get("type") == "integer" else "a number"
    low, high = node.get("minimum"), node.get("maximum")
    if low is not None and high is not None:
        return f"{noun} from {low} to {high}"
    if low == 0 and noun == "a number":
        return "a non-negative number"
    return (
        noun
        + (f" of at least {low}" if low is not None else "")
        + (f" greater than {node['exclusiveMinimum']}" if "exclusiveMinimum" in node else "")
        + (f" of at most {high}" if high is not None else "")
        + (f" less than {node['exclusiveMaximum']}" if "exclusiveMaximum" in node else "")
    )


def _either(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def kind(value: Any) -> str:
    """What was found, shown inert and short (the document is untrusted)."""
    if isinstance(value, str):
        return one_line(repr(value), 60)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return one_line(repr(value), 30)
    if isinstance(value, dict):
        return "an object"
    return "a list" if isinstance(value, list) else type(value).__name__

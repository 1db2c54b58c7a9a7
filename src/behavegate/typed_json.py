"""behavegate's own JSON formats (shard reports, baselines) read by their schema.

A format is a tree of ``msgspec.Struct`` types whose annotations are the whole shape:
types, required keys, lengths and bounds (``msgspec.Meta``), and where a plain
description reads better than the generated one, ``Meta(description=...)``. msgspec
decodes a valid document straight into those types. Only a refused one is walked
again here, against the same types, to list every problem (up to a cap), each named
by its JSON path and worded by behavegate, never by msgspec's error text, so the
messages are the same whatever msgspec version reads the file.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import msgspec
import msgspec.inspect as mi

from behavegate import finite_json
from behavegate.errors import Problem
from behavegate.text import one_line

T = TypeVar("T")
Add = Callable[[str, str], None]  # records one problem: its JSON path, its text


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
    except msgspec.ValidationError as refused:
        reason = str(refused)
    except msgspec.DecodeError:
        reason = ""
    try:
        raw = finite_json.loads_document(text)
    except (ValueError, RecursionError) as exc:
        raise NotJSON(one_line(str(exc), 200)) from None
    found = tuple(problems(raw, schema, max_problems))
    if not found:  # msgspec refused what the walk accepts: say what it said, rather than nothing
        found = (Problem(f"is not valid: {one_line(reason, 200)}"),)
    raise Refused(raw, found)


def problems(raw: Any, schema: Any, limit: int = 20) -> Iterator[Problem]:
    """Every way ``raw`` (decoded JSON) departs from ``schema``, at most ``limit``."""
    found: list[Problem] = []

    def add(path: str, text: str) -> None:
        found.append(Problem(f"{path} {text}" if path else text, path))
        if len(found) >= limit:
            raise _Enough

    with contextlib.suppress(_Enough):
        _check(raw, _info(schema), "", add)
    return iter(found)


class _Enough(Exception):
    pass


_INFO: dict[Any, mi.Type] = {}


def _info(schema: Any) -> mi.Type:
    if schema not in _INFO:
        _INFO[schema] = mi.type_info(schema)
    return _INFO[schema]


def _check(value: Any, t: mi.Type, path: str, add: Add, described: str = "") -> None:
    if isinstance(t, mi.Metadata):
        description = (t.extra_json_schema or {}).get("description", "")
        return _check(value, t.type, path, add, description or described)
    if isinstance(t, mi.AnyType):
        return None
    if isinstance(t, mi.UnionType):
        return _union(value, t, path, add, described)
    if isinstance(t, mi.StructType):
        return _struct(value, t, path, add, described)
    if isinstance(t, mi.ListType | mi.VarTupleType | mi.TupleType):
        return _list(value, t, path, add, described)
    if isinstance(t, mi.DictType):
        if type(value) is not dict:
            return add(path, f"must be {described or 'a JSON object'}, got {kind(value)}")
        if t.max_length is not None and len(value) > t.max_length:
            return add(path, f"must have at most {t.max_length} keys, got {len(value)}")
        for key, item in value.items():
            _check(item, t.value_type, f"{path}.{key}" if path else key, add)
        return None
    if not _fits(value, t):
        add(path, f"must be {described or wording(t)}, got {kind(value)}")
    return None


def _union(value: Any, t: mi.UnionType, path: str, add: Add, described: str) -> None:
    nullable = any(isinstance(m, mi.NoneType) for m in t.types)
    members = [m for m in t.types if not isinstance(m, mi.NoneType)]
    if value is None and nullable:
        return None
    tagged = [m for m in members if isinstance(m, mi.StructType) and m.tag_field is not None]
    if tagged and len(tagged) == len(members):  # a tagged union: the tag says which struct to check against
        return _tagged(value, tagged, path, add, described)
    if len(members) == 1:  # the usual case, ``X | None``: X's own checks, saying "or null"
        inner = described or wording(members[0])
        return _check(value, members[0], path, add, f"{inner} or null" if nullable else inner)
    if not any(_accepts(value, m) for m in members):
        words = [wording(m) for m in members] + (["null"] if nullable else [])
        add(path, f"must be {described or _either(words)}, got {kind(value)}")
    return None


def _tagged(value: Any, members: list[mi.StructType], path: str, add: Add, described: str) -> None:
    if type(value) is not dict:
        return add(path, f"must be {described or 'a JSON object'}, got {kind(value)}")
    field = str(members[0].tag_field)
    at = f"{path}.{field}" if path else field
    if field not in value:
        return add(at, "is missing")
    chosen = [m for m in members if type(value[field]) is type(m.tag) and value[field] == m.tag]
    if not chosen:
        return add(at, f"must be {_either([str(m.tag) for m in members])}, got {kind(value[field])}")
    return _struct(value, chosen[0], path, add, described)


def _struct(value: Any, t: mi.StructType, path: str, add: Add, described: str) -> None:
    if type(value) is not dict:
        return add(path, f"must be {described or 'a JSON object'}, got {kind(value)}")
    known = {f.encode_name for f in t.fields} | ({str(t.tag_field)} if t.tag_field else set())
    if t.tag_field is not None and not (type(value.get(t.tag_field)) is type(t.tag) and value.get(t.tag_field) == t.tag):
        add(f"{path}.{t.tag_field}" if path else str(t.tag_field), f"must be {t.tag}, got {kind(value.get(t.tag_field))}")
    for f in t.fields:
        at = f"{path}.{f.encode_name}" if path else f.encode_name
        if f.encode_name in value:
            _check(value[f.encode_name], f.type, at, add)
        elif f.required:
            add(at, "is missing")
    if t.forbid_unknown_fields:
        for key in value:
            if key not in known:
                add(f"{path}.{key}" if path else str(key), f"is unknown here (the keys are {', '.join(sorted(known))})")
    return None


def _list(value: Any, t: mi.ListType | mi.VarTupleType | mi.TupleType, path: str, add: Add, described: str) -> None:
    if type(value) is not list:
        return add(path, f"must be {described or 'a list'}, got {kind(value)}")
    if isinstance(t, mi.TupleType):
        if len(value) != len(t.item_types):
            return add(path, f"must be {described or f'a list of {len(t.item_types)} items'}, got {len(value)} items")
        for index, (item, item_type) in enumerate(zip(value, t.item_types, strict=True)):
            _check(item, item_type, f"{path}[{index}]", add)
        return None
    if t.max_length is not None and len(value) > t.max_length:
        return add(path, f"must have at most {t.max_length} entries, got {len(value)}")
    if t.min_length is not None and len(value) < t.min_length:
        return add(path, f"must have at least {t.min_length} entries, got {len(value)}")
    for index, item in enumerate(value):
        _check(item, t.item_type, f"{path}[{index}]", add)
    return None


def _fits(value: Any, t: mi.Type) -> bool:
    """A scalar ``value`` against a scalar type, as msgspec's strict decoding judges it."""
    if isinstance(t, mi.StrType):
        return (
            type(value) is str
            and (t.min_length is None or len(value) >= t.min_length)
            and (t.max_length is None or len(value) <= t.max_length)
            and (t.pattern is None or re.search(t.pattern, value) is not None)
        )
    if isinstance(t, mi.IntType | mi.FloatType):
        number = type(value) is int or (isinstance(t, mi.FloatType) and type(value) is float)
        return number and _within(value, t)
    if isinstance(t, mi.BoolType):
        return type(value) is bool
    if isinstance(t, mi.NoneType):
        return value is None
    if isinstance(t, mi.LiteralType):
        return any(type(value) is type(v) and value == v for v in t.values)
    raise TypeError(f"typed_json cannot check {t!r}")  # a format uses a type this module does not know


def _within(value: float, t: mi.IntType | mi.FloatType) -> bool:
    return (
        (t.ge is None or value >= t.ge)
        and (t.gt is None or value > t.gt)
        and (t.le is None or value <= t.le)
        and (t.lt is None or value < t.lt)
    )


def wording(t: mi.Type) -> str:
    """What a value of type ``t`` is, in a person's words."""
    if isinstance(t, mi.Metadata):
        return str((t.extra_json_schema or {}).get("description", "")) or wording(t.type)
    if isinstance(t, mi.StrType):
        text = "a non-empty string" if t.min_length == 1 else "a string"
        return text + (f" of at most {t.max_length} characters" if t.max_length is not None else "")
    if isinstance(t, mi.IntType | mi.FloatType):
        noun = "a whole number" if isinstance(t, mi.IntType) else "a number"
        low, high = t.ge, t.le
        if low is not None and high is not None:
            return f"{noun} from {low} to {high}"
        if low == 0 and isinstance(t, mi.FloatType):
            return "a non-negative number"
        return noun + (f" of at least {low}" if low is not None else "") + (f" of at most {high}" if high is not None else "")
    if isinstance(t, mi.BoolType):
        return "true or false"
    if isinstance(t, mi.NoneType):
        return "null"
    if isinstance(t, mi.LiteralType):
        return _either([v if isinstance(v, str) else json.dumps(v) for v in t.values])
    if isinstance(t, mi.UnionType):
        return _either([wording(m) for m in t.types])
    if isinstance(t, mi.StructType | mi.DictType):
        return "a JSON object"
    return "a list" if isinstance(t, mi.ListType | mi.VarTupleType | mi.TupleType) else "any JSON value"


def _either(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _accepts(value: Any, t: mi.Type) -> bool:
    def refuse(path: str, text: str) -> None:
        raise _Enough

    try:
        _check(value, t, "", refuse)
    except _Enough:
        return False
    return True


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

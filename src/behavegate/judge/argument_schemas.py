"""JSON Schema checks of tool-call arguments (``tools.arguments_valid``).

Uses the ``jsonschema`` package: the reference Python implementation, kept
current with the drafts (2020-12 included), pure Python, and the validator
the OpenAPI and MCP tool ecosystems use. A schema is checked against its own
metaschema first, so an invalid declared schema is reported, not trusted.

A schema is resolved only within itself: the contract reader refuses any
reference that is not a local ``#...`` pointer (``contract.schema_refs``), and
the validator gets an empty reference registry whose retrieval refuses
everything, so jsonschema's deprecated remote resolution (urlopen on
``http://`` and ``file://``) can never run. No format checker is enabled, so
no ``format`` looks anything up or compiles anything (``format: regex`` would
``re.compile`` an agent-supplied string).

Schema regexes run on agent-supplied strings, and ``re`` backtracks without bound
while holding the GIL. Every keyword that searches one (``pattern``,
``patternProperties``, and the ``patternProperties`` lookups of
``additionalProperties`` and ``unevaluatedProperties``) runs on the ``regex``
package instead, with a timeout drawn from one budget per ``arguments_valid``
check of an attempt (``ARGUMENT_REGEX_BUDGET_MS``). ``propertyNames`` and
``dependentSchemas`` only descend into subschemas, so their patterns go through
the same keywords.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from functools import lru_cache
from types import FunctionType
from typing import Any

from behavegate.frozen import Frozen
from behavegate.limits import ARGUMENT_REGEX_BUDGET_MS
from behavegate.model import ToolCall

# When the running check's regex budget ends (time.monotonic()). A context variable,
# not validator state: validators are cached and shared by the judge threads.
_DEADLINE: ContextVar[float | None] = ContextVar("argument_regex_deadline", default=None)


class ArgumentCheck(Frozen):
    """One call's argument problems, or why they could not be decided."""

    problems: tuple[str, ...] = ()
    incomplete: str | None = None  # set when a schema regex ran out of time: neither valid nor invalid


class _PatternTimeout(Exception):
    """A schema regex did not finish within the check's budget."""


class _PatternInvalid(Exception):
    """A schema regex the ``regex`` engine cannot compile (the contract reader refuses these)."""


def _search(pattern: str, text: str) -> Any:
    """``re.search`` for schema keywords, under the running check's deadline."""
    import regex

    deadline = _DEADLINE.get()  # None outside check_calls: then this search gets a budget of its own
    left = ARGUMENT_REGEX_BUDGET_MS / 1000 if deadline is None else deadline - time.monotonic()
    if left <= 0:
        raise _PatternTimeout
    try:
        # concurrent: release the GIL while matching, so a judge thread never stalls the event loop
        return regex.search(pattern, text, timeout=left, concurrent=True)
    except TimeoutError:
        raise _PatternTimeout from None
    except regex.error as exc:
        raise _PatternInvalid(f"{pattern!r} is not a valid regular expression: {exc}") from None


class _BudgetedRe:
    """Stands in for the ``re`` module inside copies of jsonschema helpers (see ``_budgeted_unevaluated``)."""

    @staticmethod
    def search(pattern: str, string: str, flags: int = 0) -> Any:
        return _search(pattern, string)


def _with_globals(function: Any, **names: Any) -> Any:
    """A copy of a jsonschema function whose module globals ``names`` override; jsonschema's
    own module stays untouched for any other caller."""
    namespace = {**function.__globals__, **names}
    return FunctionType(function.__code__, namespace, function.__name__, function.__defaults__, function.__closure__)


def _budgeted_unevaluated(keyword: Any, helper: Any) -> Any:
    """``unevaluatedProperties`` whose evaluated-keys helper (long, recursive by name, and the
    one with the ``re.search``) is jsonschema's own code seeing ``_BudgetedRe`` as ``re``:
    reused rather than rewritten, so its semantics stay jsonschema's."""
    copy = _with_globals(helper, re=_BudgetedRe)
    copy.__globals__[helper.__name__] = copy  # its recursive calls reach the copy
    return _with_globals(keyword, **{helper.__name__: copy})


# --- keywords (same messages as jsonschema's, only the search differs) -----------------------


def _pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _search(patrn, instance):
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> Iterator[str]:
    properties = schema.get("properties", {})
    patterns = "|".join(schema.get("patternProperties", {}))  # one alternation, as jsonschema searches it
    for key in instance:
        if key not in properties and not (patterns and _search(patterns, key)):
            yield key


def _additional_properties(validator: Any, aP: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema._utils import extras_msg
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    extras = set(_additional(instance, schema))
    if validator.is_type(aP, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], aP, path=extra)
    elif not aP and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:
            error = "Additional properties are not allowed (%s %s unexpected)"
            yield ValidationError(error % extras_msg(sorted(extras, key=str)))


@lru_cache(maxsize=1)
def _replacements() -> dict[Any, Any]:
    """jsonschema's regex-running keyword functions -> their budgeted stand-ins."""
    from jsonschema import _keywords, _legacy_keywords, _utils

    helper = "find_evaluated_property_keys_by_schema"
    return {
        _keywords.pattern: _pattern,
        _keywords.patternProperties: _pattern_properties,
        _keywords.additionalProperties: _additional_properties,
        _keywords.unevaluatedProperties: _budgeted_unevaluated(_keywords.unevaluatedProperties, getattr(_utils, helper)),
        _legacy_keywords.unevaluatedProperties_draft2019: _budgeted_unevaluated(
            _legacy_keywords.unevaluatedProperties_draft2019, getattr(_legacy_keywords, helper)
        ),
    }


@lru_cache(maxsize=16)
def budgeted(cls: Any) -> Any:
    """The validator class ``cls`` (a draft) with its regex-running keywords budgeted."""
    import jsonschema

    replacements = _replacements()
    keywords = {name: replacements[f] for name, f in cls.VALIDATORS.items() if f in replacements}
    return jsonschema.validators.extend(cls, keywords)  # type: ignore[no-untyped-call]  # jsonschema leaves it unannotated


def _refuse(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs fields mypy cannot see


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    import json

    import jsonschema
    from referencing import Registry

    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)  # the metaschema's own regexes run on the contract's schema, not on agent data
    # jsonschema adds its bundled metaschemas (package data) to this registry; nothing else resolves.
    return budgeted(cls)(schema, registry=Registry(retrieve=_refuse))  # type: ignore[call-arg]  # attrs, as in jsonschema


_ENDLESS = "the declared parameters schema refers to itself without end (a $ref cycle), so it cannot be checked"


def _check(call: ToolCall, schemas: Mapping[str, Mapping[str, Any]], budget_ms: float) -> ArgumentCheck:
    import json

    import jsonschema
    from referencing.exceptions import Unresolvable

    if call.name not in schemas:
        return ArgumentCheck(("the tool is not declared, so there is no schema to check against",))
    if call.arguments is None and call.executed is not None:  # not recorded (a trace, a mapping): neither valid nor not
        return ArgumentCheck(incomplete=f"arguments of the {call.name!r} call were not observed")
    if call.arguments is None:
        return ArgumentCheck(("arguments were not a JSON object",))
    try:
        validator = _validator(json.dumps(schemas[call.name], sort_keys=True))
    except jsonschema.SchemaError as exc:
        return ArgumentCheck((f"the declared parameters schema is invalid: {exc.message}",))
    except RecursionError:
        return ArgumentCheck(incomplete=_ENDLESS)
    try:
        errors = sorted(validator.iter_errors(dict(call.arguments)), key=lambda e: list(e.absolute_path))
    except RecursionError:
        # {"$ref": "#"} and mutual $defs references: a cycle no instance ends, so the
        # schema can decide nothing (never a pass, and the run goes on).
        return ArgumentCheck(incomplete=_ENDLESS)
    except Unresolvable as exc:
        return ArgumentCheck((f"the declared parameters schema has a reference that does not resolve locally: {exc.ref!r}",))
    except _PatternTimeout:
        return ArgumentCheck(incomplete=f"argument schema pattern exceeded its time budget of {budget_ms:g} ms")
    except _PatternInvalid as exc:
        return ArgumentCheck((f"the declared parameters schema is invalid: {exc}",))
    return ArgumentCheck(tuple(f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in errors[:10]))


def check_calls(
    calls: Sequence[ToolCall], schemas: Mapping[str, Mapping[str, Any]], budget_ms: float = ARGUMENT_REGEX_BUDGET_MS
) -> tuple[ArgumentCheck, ...]:
    """Each call's arguments against its declared schema, in order; the schema regexes of
    all the calls share one time budget (one attempt's ``arguments_valid``)."""
    token = _DEADLINE.set(time.monotonic() + budget_ms / 1000)
    try:
        return tuple(_check(call, schemas, budget_ms) for call in calls)
    finally:
        _DEADLINE.reset(token)

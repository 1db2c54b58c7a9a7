"""The scalar values of version-2 keys: rates, counts, prices, choices, phone regions and
patterns, each read with its YAML path and line (a problem raises ``rules.Bad``)."""

from __future__ import annotations

from typing import Any

from behavegate.contract import rules as f
from behavegate.limits import MAX_PRICE_PER_MTOK


def rate(value: Any, path: str, line: int | None = None) -> float:
    number = f.number(value, path, line)
    if not 0 <= number <= 1:
        raise f.Bad(f"{path} must be between 0 and 1", path, line)
    return number + 0.0  # -0.0 is 0.0: no view prints "-0.0%"


def positive_int(value: Any, path: str, line: int | None = None, *, high: int | None = None) -> int:
    number = f.integer(value, path, line)
    if number < 1 or (high is not None and number > high):
        raise f.Bad(f"{path} must be between 1 and {high}" if high else f"{path} must be at least 1", path, line)
    return number


def non_negative_int(value: Any, path: str, line: int | None = None) -> int:
    number = f.integer(value, path, line)
    if number < 0:
        raise f.Bad(f"{path} must be non-negative", path, line)
    return number


def positive_number(value: Any, path: str, line: int | None = None) -> float:
    number = f.number(value, path, line)
    if number <= 0:
        raise f.Bad(f"{path} must be greater than 0", path, line)
    return number


def price(value: Any, path: str, line: int | None = None) -> float:
    """USD per million tokens: 0 (a model that costs nothing) up to a typo guard."""
    number = f.number(value, path, line)
    if not 0 <= number <= MAX_PRICE_PER_MTOK:
        raise f.Bad(f"{path} must be between 0 and {MAX_PRICE_PER_MTOK:,.0f} (USD per million tokens)", path, line)
    return number + 0.0


def choice(value: Any, path: str, line: int | None, options: tuple[str, ...]) -> str:
    text = f.text(value, path, line)
    if text not in options:
        raise f.Bad(f"{path} must be one of {list(options)}, got {text!r}", path, line)
    return text


def phone_region(value: Any, path: str, line: int | None = None) -> str:
    """An ISO 3166-1 alpha-2 code with phone numbering metadata ("DE", "GB"; "UK" is not one)."""
    import phonenumbers

    text = f.text(value, path, line)
    if text not in phonenumbers.SUPPORTED_REGIONS:
        raise f.Bad(f"{path} must be a region code with phone numbering metadata, such as DE, GB or US; got {text!r}", path, line)
    return text


def pattern(value: Any, path: str, line: int | None = None) -> str:
    """A pattern compiled by the engine that will run it (``judge.user_regex``)."""
    from behavegate.contract.patterns import pattern_problem

    text = f.text(value, path, line)
    problem = pattern_problem(text)
    if problem is not None:
        raise f.Bad(f"{path} is not a valid regular expression: {problem}", path, line)
    return text

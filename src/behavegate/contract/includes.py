"""Scenario libraries for ``include:``: ``builtin:NAME`` ships with behavegate
(``behavegate/payloads/NAME.yml``); anything else is a file next to the contract,
inside the project. A library is ``{version: 2, scenarios: [...]}``; adding a
scenario is a YAML edit."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from behavegate.contract import rules as f
from behavegate.contract.yaml_lines import LineMap, YamlRefused, load_yaml
from behavegate.errors import InputError
from behavegate.files import read_project_text
from behavegate.limits import V2_INPUT_MAX_VALUES, V2_MAX_INPUT_BYTES


def builtin_names() -> list[str]:
    folder = resources.files("behavegate.contract") / "payloads"
    return sorted(p.name.removesuffix(".yml") for p in folder.iterdir() if p.name.endswith(".yml"))


def read_include(name: str, contract_dir: Path, root: Path) -> tuple[list[Any], LineMap, str]:
    """The scenarios of the library ``name``, their lines, and the library's text."""
    text = include_text(name, contract_dir, root)
    try:
        raw, lines = load_yaml(text, "Included file", V2_INPUT_MAX_VALUES)
    except YamlRefused as refused:
        raise f.Bad(refused.problem.text) from None
    f.check_shape(raw, "Included file", V2_INPUT_MAX_VALUES)
    if not isinstance(raw, dict) or not isinstance(raw.get("scenarios"), list):
        raise f.Bad("an included file must be a mapping with a scenarios list")
    extra = sorted(str(k) for k in raw if k not in {"version", "scenarios", "description"})
    if extra:
        raise f.Bad(f"Unknown behavior contract key in included file: {extra}")
    if raw.get("version", 2) != 2:
        raise f.Bad("an included file must be version 2")
    return raw["scenarios"], lines, text


def include_text(name: str, contract_dir: Path, root: Path) -> str:
    if name.startswith("builtin:"):
        library = name.removeprefix("builtin:")
        if library not in builtin_names():
            hint = f.did_you_mean(library, builtin_names()).replace("mean ", "mean builtin:")
            raise f.Bad(f"unknown builtin library {library!r}{hint}; available: {builtin_names()}")
        text = (resources.files("behavegate.contract") / "payloads" / f"{library}.yml").read_text(encoding="utf-8")
    else:
        try:
            _, text = read_project_text(contract_dir / name, root, "Included file", V2_MAX_INPUT_BYTES)
        except InputError as error:
            raise f.Bad(str(error)) from None
    return text

"""``behavegate list [LIBRARY]``: the builtin scenario libraries, and a library's
scenarios with their tags (what ``include: [builtin:NAME]`` and ``--tag`` select)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from behavegate.errors import ExitCode
from behavegate.github.console import Console
from behavegate.text import one_line

if TYPE_CHECKING:
    from behavegate.commands.invocation import ListCommand


def library(name: str) -> list[dict[str, Any]]:
    """A builtin library's scenarios as ``{"id", "tags"}``, in file order."""
    from behavegate.contract.includes import read_include

    scenarios, _, _ = read_include(f"builtin:{name}", Path("."), Path("."))
    return [{"id": str(s.get("id")), "tags": [str(tag) for tag in s.get("tags") or []]} for s in scenarios if isinstance(s, dict)]


def run(command: ListCommand, console: Console) -> int:
    from behavegate.contract.includes import builtin_names

    names = builtin_names()
    if command.library is None:
        libraries = {f"builtin:{name}": library(name) for name in names}
        if command.format == "json":
            console.json(json.dumps({"libraries": libraries}, indent=2))
            return ExitCode.PASS
        lines = []
        for name, scenarios in libraries.items():
            tags = Counter(tag for s in scenarios for tag in s["tags"])
            counted = ", ".join(f"{tag} {count}" for tag, count in sorted(tags.items(), key=lambda item: (-item[1], item[0])))
            lines.append(f"{name}: {len(scenarios)} scenarios; tags: {counted}")
        lines.append("")
        lines.append("Use one in a version-2 contract with `include: [builtin:NAME]`; run part of it with --tag TAG.")
        lines.append("List its scenarios: behavegate list builtin:NAME")
        console.out("\n".join(lines))
        return ExitCode.PASS
    name = command.library.removeprefix("builtin:")
    if name not in names:
        available = ", ".join(f"builtin:{n}" for n in names)
        console.err(f"behavegate list: unknown library {one_line(command.library)!r}; available: {available}")
        return ExitCode.INCOMPLETE
    scenarios = library(name)
    if command.format == "json":
        console.json(json.dumps({"library": f"builtin:{name}", "scenarios": scenarios}, indent=2))
        return ExitCode.PASS
    width = max((len(s["id"]) for s in scenarios), default=0)
    lines = [f"builtin:{name}: {len(scenarios)} scenarios", ""]
    lines += [f"{s['id'].ljust(width)}  {', '.join(s['tags'])}".rstrip() for s in scenarios]
    console.out("\n".join(lines))
    return ExitCode.PASS

"""``behavegate init``: write a starter contract, and keep the evidence of runs
out of git (``.behavegate/runs/`` holds what the agent said, unmasked)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from behavegate.errors import BehavegateError, ExitCode
from behavegate.github.console import Console

if TYPE_CHECKING:
    from behavegate.commands.invocation import InitCommand


def run(command: InitCommand, console: Console) -> int:
    from behavegate.contract.starter import STARTER_CONTRACT, STARTER_CONTRACT_V2
    from behavegate.files import place_output, write_file

    root = Path.cwd().resolve()
    try:
        place = place_output(command.path, root, "--path", os.environ, root)  # the one path rule (docs/cli.md)
        destination = place.path
        try:
            text = STARTER_CONTRACT_V2 if command.contract_version == 2 else STARTER_CONTRACT
            write_file(place, text, "--path", overwrite=command.force)
        except FileExistsError:
            console.err(
                f"Could not create agent behavior contract: contract already exists: {destination}; use --force to overwrite"
            )
            return ExitCode.INCOMPLETE
    except (BehavegateError, OSError) as exc:
        console.err(f"Could not create agent behavior contract: {exc}")
        return ExitCode.INCOMPLETE
    console.out(
        f"Created agent behavior contract: {destination}\n"
        "Run it with: behavegate test --observations FILE  (or --allow-contract-endpoint for live)"
    )
    _ignore_runs(root, console)
    return ExitCode.PASS


IGNORED = ".behavegate/runs/"
# Lines that already keep the run directories out of git (unanchored or anchored).
ALREADY = {
    f"{prefix}{path}{suffix}"
    for prefix in ("", "/")
    for path in (".behavegate", ".behavegate/runs")
    for suffix in ("", "/", "/*", "/**")
}


def _ignore_runs(root: Path, console: Console) -> None:
    """Append ``.behavegate/runs/`` to the project's .gitignore (created if absent),
    once. Appended, never rewritten: the user's file keeps its lines and mode. The
    contract is written either way; a .gitignore that cannot be updated is a warning."""
    from behavegate.files import Place, read_placed, write_file

    place = Place(root, (".gitignore",))
    existing = read_placed(place, 1_000_000) if (root / ".gitignore").exists() else ""
    if existing is not None and ALREADY & {line.strip() for line in existing.splitlines()}:
        return
    lead = "\n" if existing and not existing.endswith("\n") else ""
    try:
        if existing is None:
            raise BehavegateError("it is not a regular UTF-8 file of at most 1 MB")
        text = f"{lead}# behavegate: run evidence (agent output, unmasked)\n{IGNORED}\n"
        write_file(Place(root, (".gitignore",), append=True), text, ".gitignore")
    except (BehavegateError, OSError) as exc:
        console.err(
            f"Could not add {IGNORED} to {root / '.gitignore'}: {exc}; add it yourself, so that run evidence stays out of git"
        )
        return
    console.out(f"Added {IGNORED} to {root / '.gitignore'} (run evidence stays out of git)")

"""``behavegate test`` with no path: the discovered contract, and the project's Oxy test
files (``*.test.yml``), as ``oxy test`` runs them all.

Discovery must not change what an existing setup runs: folders that hold someone
else's files (dependencies, virtualenvs, build output, VCS data, our own run
directories) are never walked, and a ``*.test.yml`` that is not an Oxy test file (a
CI workflow, a fixture of another tool) is skipped with a notice instead of failing
the run. A file that means to be one (a top-level ``cases``) is read, and its
problems reported, however malformed."""

from __future__ import annotations

from pathlib import Path

from behavegate.errors import InputError
from behavegate.github.console import Console

# Never walked, at any depth: hidden folders (.git, .venv, .behavegate, .oxy_state...), and
# these. Oxy's own walk (oxy-hq/oxy crates/oxy-compile/src/walker.rs, is_skipped) prunes
# target, node_modules, dist and build; the rest hold dependencies, virtualenvs or output.
SKIPPED_FOLDERS = frozenset(
    {"node_modules", "bower_components", "vendor", "venv", "site-packages", "__pycache__", "out", "target", "dist", "build"}
)
NOT_FOUND = (
    "No .behavegate/contract.yml or .skylos/agent-test.yml found, and no Oxy test file (*.test.yml); "
    "run behavegate init, or name a contract or *.test.yml file"
)


def discover(cwd: Path, console: Console) -> list[Path] | None:
    """The discovered contract, then every Oxy test file of the project, each its own
    testsuite. None: no Oxy test file (the contract's discovery names what is missing)."""
    from behavegate.contract.oxy import SUFFIXES
    from behavegate.files import discover_contract, walk_files

    found = discover_contract(cwd)
    base = found[1] if found is not None else cwd
    tests = [path for path in walk_files(base, SUFFIXES, SKIPPED_FOLDERS) if _is_oxy_file(path, base, console)]
    if not tests:
        return None
    return ([found[0]] if found is not None else []) + tests


def locate_contract(argument: str | None, cwd: Path) -> tuple[Path, Path]:
    from behavegate.files import discover_contract

    if argument is not None:
        return Path(argument), cwd
    found = discover_contract(cwd)
    if found is None:
        raise InputError(NOT_FOUND)
    return found


def _is_oxy_file(path: Path, base: Path, console: Console) -> bool:
    from behavegate.contract.oxy import declares_cases
    from behavegate.files import read_project_text
    from behavegate.limits import V2_MAX_INPUT_BYTES
    from behavegate.text import one_line

    shown = one_line(path.relative_to(base).as_posix(), 300)
    try:
        _, source = read_project_text(path, base, "Oxy test file", V2_MAX_INPUT_BYTES)
    except InputError as exc:
        console.err(f"behavegate: skipped {shown}: {exc}")
        return False
    if declares_cases(source):
        return True
    console.err(f"behavegate: skipped {shown}: not an Oxy test file (no top-level cases:)")
    return False

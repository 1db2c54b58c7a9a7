"""``behavegate validate [CONTRACT ...]``: each contract read as ``test`` reads it, its
included files and golden sets (CSV, JSONL) with it, and nothing run: no evidence read,
no endpoint called, no file written. Every problem is listed as ``file:line: path:
message`` (an unknown key with the allowed key it is closest to); exit 0 when every
contract is valid, 2 (a configuration error, as ``test`` exits on it) otherwise."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from behavegate.errors import BehavegateError, ExitCode, Problem, ValidationError
from behavegate.github.console import Console
from behavegate.text import one_line

if TYPE_CHECKING:
    from behavegate.commands.invocation import ValidateCommand

# A problem a golden set's row holds is already named by its file and line ("golden.csv:4:expect").
_ROW_NAMED = re.compile(r"^[^\s:]+:\d+(?::|$)")


def run(command: ValidateCommand, console: Console) -> int:
    from behavegate.commands.discovery import discover, locate_contract
    from behavegate.commands.suite_run import contract_files
    from behavegate.commands.test import display_path

    root = Path.cwd().resolve()
    try:
        files = contract_files(list(command.contracts)) if command.contracts else discover(root, console)
        if not files:
            files = [locate_contract(None, root)[0]]
    except BehavegateError as exc:
        return _show(command, console, [{"contract": "", "valid": False, "problems": [_plain(exc.details()[0])]}])
    results = [_validate(path, root, display_path(Path(path).absolute(), root)) for path in files]
    return _show(command, console, results)


def _validate(path: Path, root: Path, shown: str) -> dict[str, Any]:
    from behavegate.contract.load import load_contract

    try:
        contract = load_contract(path, root)
    except ValidationError as exc:
        return {"contract": shown, "valid": False, "problems": [_entry(p) for p in exc.problems]}
    except BehavegateError as exc:  # unreadable: missing, too large, outside the project
        return {"contract": shown, "valid": False, "problems": [_plain(line) for line in exc.details()]}
    summary = {"version": contract.version, "scenarios": len(contract.scenarios), "included": sorted(contract.included)}
    return {"contract": shown, "valid": True, "problems": [], **summary}


def _entry(problem: Problem) -> dict[str, Any]:
    # "line" is the contract's; a golden set's row names its own file and line in "path".
    return {"path": problem.path, "line": None if problem.file else problem.line, "message": problem.detail()}


def _plain(message: str) -> dict[str, Any]:
    return {"path": "", "line": None, "message": message}


def _show(command: ValidateCommand, console: Console, results: list[dict[str, Any]]) -> int:
    valid = all(result["valid"] for result in results)
    if command.format == "json":
        console.json(json.dumps({"valid": valid, "contracts": results}, indent=2, sort_keys=True))
        return ExitCode.PASS if valid else ExitCode.ERROR
    lines: list[str] = []
    for result in results:
        shown = result["contract"]
        if result["valid"]:
            included = f", {len(result['included'])} included file(s)" if result["included"] else ""
            lines.append(f"{shown}: valid (version {result['version']}, {result['scenarios']} scenario(s){included})")
            continue
        count = len(result["problems"])
        lines.append(f"{shown or 'behavegate validate'}: {count} problem{'s' * (count != 1)}")
        lines += [f"  {one_line(_line(shown, problem), 2000)}" for problem in result["problems"]]
    console.out("\n".join(lines))
    return ExitCode.PASS if valid else ExitCode.ERROR


def _line(shown: str, problem: dict[str, Any]) -> str:
    """``file:line: path: message``, as compilers write it (an editor jumps to it)."""
    path, line, message = problem["path"], problem["line"], problem["message"]
    if _ROW_NAMED.match(path):
        return f"{path}: {message}"
    where = f"{shown}:{line}: " if line is not None else f"{shown}: " if shown else ""
    # "Unknown behavior contract key: defaults.x" names its path already.
    return f"{where}{path}: {message}" if path and path not in message else f"{where}{message}"

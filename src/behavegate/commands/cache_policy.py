"""Where ``--cache DIR`` may be used: while a contract is being written, never where a CI
verdict is made. A verdict that rests on a recorded answer says nothing about the agent as
it is now, so a CI environment, a comparison with a baseline, a shard (merged into one
verdict) and the outputs only CI reads refuse it, before anything is asked."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from behavegate.errors import InputError, UsageError
from behavegate.files import Place, check_output, place_output
from behavegate.gating import FailOn

if TYPE_CHECKING:
    from behavegate.commands.invocation import TestCommand
    from behavegate.model import Contract

CI_VARIABLES = ("GITHUB_ACTIONS", "CI")
REFUSED = "a CI verdict never rests on a cached answer; --cache is for writing a contract on your machine"


def check_cache(command: TestCommand, contract: Contract, environ: Mapping[str, str], root: Path) -> None:
    """UsageError (exit 2) when ``--cache`` was given where it may not be."""
    if command.live.cache is None:
        return
    if not command.live.cache.strip():
        raise UsageError("--cache needs a folder: --cache DIR")
    for name in CI_VARIABLES:
        if environ.get(name, "").strip().lower() == "true":
            raise UsageError(f"--cache is refused under {name}=true: {REFUSED}")
    gates = (
        ("--baseline", command.gating.baseline is not None),
        ("--fail-on regression", command.gating.fail_on is FailOn.REGRESSION),
        ("--shard", command.shard is not None),
        ("--github-output", command.views.paths.github_output is not None),
        ("--annotations", command.views.annotations),
    )
    for flag, given in gates:
        if given:
            raise UsageError(f"--cache cannot be combined with {flag}: {REFUSED}")
    if command.evidence.observations or command.evidence.traces:
        raise UsageError("--cache keeps a live agent's answers: --observations and --traces are already recorded evidence")
    if contract.version >= 2 and (contract.agent.api == "mcp" or contract.agent.serve_mcp):
        # Tool-side evidence lands on the MCP server while the agent answers: a replayed answer has none.
        raise UsageError(
            "--cache cannot be used with an MCP agent (agent.api: mcp) or agent.mcp: tool-side evidence is not replayed"
        )


def cache_folder(given: str, root: Path, environ: Mapping[str, str], cwd: Path) -> Place:
    """The folder, placed by the rule of every file behavegate writes (files.py): inside the
    project or under $RUNNER_TEMP, no link on the way; refused now, before anything is asked."""
    folder = place_output(given, root, "--cache", environ, cwd)
    if folder.append or (folder.path.exists() and not folder.path.is_dir()):
        raise InputError(f"--cache {given} must be a folder")
    check_output(Place(folder.base, (*folder.parts, "entry")), "--cache")  # every part of the folder's way
    return folder

"""The reference docs stay in step with the code."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from conftest import Golden

from behavegate.cli import build_parser
from behavegate.judge.assertions import REGISTRY

DOCS = Path(__file__).resolve().parents[1] / "docs"
BLOCK = re.compile(r"<!-- help:(?P<name>[a-z-]+) -->\n```text\n(?P<body>.*?)```\n<!-- /help -->", re.S)


def help_text(command: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", "100")
    parser = build_parser()
    if command == "behavegate":
        return parser.format_help()
    return subcommands(parser)[command].format_help()


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Every command, nested actions included as ``command-action`` (``traces-inspect``)."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                found[name] = command
                found.update({f"{name}-{inner}": nested for inner, nested in subcommands(command).items()})
    return found


def test_cli_reference_shows_the_current_help_of_every_command(monkeypatch: pytest.MonkeyPatch, golden: Golden) -> None:
    path = DOCS / "cli.md"
    text = path.read_text(encoding="utf-8")
    blocks = {m.group("name"): m for m in BLOCK.finditer(text)}
    parser = build_parser()
    commands = ["behavegate", *subcommands(parser)]
    assert set(blocks) == set(commands), "docs/cli.md needs one help block per command"
    current = {name: help_text(name, monkeypatch) for name in commands}
    if golden.update:
        path.write_text(
            BLOCK.sub(lambda m: f"<!-- help:{m['name']} -->\n```text\n{current[m['name']]}```\n<!-- /help -->", text),
            encoding="utf-8",
        )
        return
    for name in commands:
        assert blocks[name].group("body") == current[name], f"docs/cli.md help for {name!r} is stale; run `make golden`"


def test_the_contract_reference_tables_are_the_check_rows() -> None:
    """docs/contract.md's tables of checks are written from contract/checks.py by
    scripts/check_tables.py: a check added or described anew shows there, or this fails."""
    import subprocess
    import sys

    script = DOCS.parent / "scripts" / "check_tables.py"
    checked = subprocess.run([sys.executable, str(script), "--check"], check=False)
    assert checked.returncode == 0, "docs/contract.md's tables of checks are stale: run `python scripts/check_tables.py`"
    text = (DOCS / "contract.md").read_text(encoding="utf-8")
    documented = re.findall(r"^\| `([a-z_.]+)` \| `[a-z_]+` \|", text, re.M)
    assert documented == [entry.key for entry in REGISTRY], "one line per check, in report order"


def test_every_option_of_test_and_merge_is_in_a_group_named_for_what_people_look_for() -> None:
    """`behavegate test --help` is not one list of ~50 options: each but --help sits in a named
    group (agent and evidence, running live, judging, reports and outputs...), in that order."""
    from behavegate.commands.arguments import GROUPS

    commands = subcommands(build_parser())
    for name in ("test", "merge"):
        parser = commands[name]
        named = [group for group in parser._action_groups if group.title not in ("positional arguments", "options")]
        grouped = {action.dest for group in named for action in group._group_actions}
        loose = [action.option_strings for action in parser._actions if action.option_strings and action.dest not in grouped]
        assert loose == [["-h", "--help"]], f"{name}: options outside a named group: {loose}"
    titles = [group.title for group in commands["test"]._action_groups][2:]  # after positional arguments, options
    assert titles == [title for title, _ in GROUPS.values()]


def test_the_readme_failure_sample_is_the_real_output(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's failing-run sample is a verbatim slice of what `make demo` prints
    for the regressed refund agent."""
    from behavegate.cli import main

    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    sample = re.search(r"A failing run tells you.*?\n```\n(?P<body>.*?)```\n", readme, re.S)
    assert sample, "README.md lost its failing-run sample"
    monkeypatch.chdir(DOCS.parent)
    example = "examples/refund-agent"
    args = ["test", f"{example}/contract.yml", "--observations", f"{example}/observations-regressed.json", "--no-artifacts"]
    assert main(args) == 1
    real = capsys.readouterr().out
    assert sample["body"] in real, "README.md's failing-run sample differs from the real output; copy it from `make demo`"


def test_the_layout_map_names_every_module_with_its_docstring() -> None:
    """docs/layout.md's module map is generated from the modules (scripts/layout_map.py): a module
    added, moved or described anew shows there, or this fails until the script is run."""
    import subprocess
    import sys

    script = DOCS.parent / "scripts" / "layout_map.py"
    checked = subprocess.run([sys.executable, str(script), "--check"], check=False)
    assert checked.returncode == 0, "docs/layout.md's module map is stale: run `python scripts/layout_map.py`"

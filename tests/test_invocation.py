"""Typed to the edge: argparse's Namespace is read once, into each command's frozen value
(commands/arguments.py); every option a command reads is a field of it, and nothing
below the command line reads argparse."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from behavegate.cli import build_parser
from behavegate.commands.arguments import parsed
from behavegate.commands.invocation import MergeCommand, TestCommand

SRC = Path(__file__).resolve().parents[1] / "src" / "behavegate"


def _options(command: str) -> list[argparse.Action]:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [a for a in commands.choices[command]._actions if a.option_strings and a.dest != "help"]


def _given(action: argparse.Action) -> list[str]:
    """The option given with a value that is not its default."""
    flag = action.option_strings[0]
    if action.nargs == 0:
        return [flag]
    if action.choices:
        return [flag, next(str(c) for c in action.choices if c != action.default)]
    if action.dest == "gate_tag":
        return [flag, "a=0.5"]
    if action.dest == "interval":  # watch's: 0.5 is its default
        return [flag, "2"]
    numeric = action.type is float or action.dest == "min_pass_rate"
    return [flag, "3" if action.type is int else "0.5" if numeric else "x"]


@pytest.mark.parametrize(
    ("command", "positional"), [("test", []), ("watch", []), ("merge", ["shard.json"])], ids=["test", "watch", "merge"]
)
def test_every_option_given_reaches_the_commands_frozen_value(command: str, positional: list[str]) -> None:
    """An option the builder forgot would be parsed and then silently ignored."""
    bare = parsed(build_parser().parse_args([command, *positional]))
    for action in _options(command):
        given = parsed(build_parser().parse_args([command, *positional, *_given(action)]))
        assert given != bare, f"{command} {action.option_strings[0]} does not reach {type(bare).__name__}"


def test_the_commands_values_are_frozen() -> None:
    value = parsed(build_parser().parse_args(["test", "c.yml", "--max-seconds", "5"]))
    assert isinstance(value, TestCommand) and value.contracts == ("c.yml",) and value.request.max_seconds == 5
    with pytest.raises(AttributeError):
        value.contract = "other.yml"  # type: ignore[misc]
    merged = parsed(build_parser().parse_args(["merge", "a.json", "--fail-on", "fail"]))
    assert isinstance(merged, MergeCommand) and merged.gating.fail_on == "fail"


def test_nothing_below_the_command_line_reads_argparse() -> None:
    """argparse is imported by the parser's modules only (cli.py, commands/arguments.py, and the
    output boundary's ArgumentParser in github/console.py); only commands/arguments.py reads a Namespace."""
    importers, readers = set(), set()
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        name = path.relative_to(SRC).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(alias.name == "argparse" for alias in node.names):
                importers.add(name)
            if isinstance(node, ast.ImportFrom) and node.module == "argparse":
                importers.add(name)
            if isinstance(node, ast.Attribute | ast.Name) and "Namespace" in (getattr(node, "attr", ""), getattr(node, "id", "")):
                readers.add(name)
    assert importers <= {"cli.py", "commands/arguments.py", "github/console.py"}
    assert readers == {"commands/arguments.py"}

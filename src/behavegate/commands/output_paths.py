"""Where a run's output flags write, under the one path rule (``files.place_output``),
checked before any work is paid for; and the rendered run shown or written there."""

from __future__ import annotations

import argparse
import itertools
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from behavegate.errors import InputError
from behavegate.files import Place

if TYPE_CHECKING:
    from behavegate.github.console import Console

OUTPUT_FLAGS = ("output", "report", "junit", "summary", "html", "sarif", "github_output", "save_observations")


def place_flag(args: argparse.Namespace, flag: str, root: Path) -> Place:
    """Where ``--flag``'s file goes. ``--output`` keeps skylos's JSON error words."""
    from behavegate.files import place_output

    label = "--" + flag.replace("_", "-")
    try:
        return place_output(getattr(args, flag), root, label, os.environ, root, append=flag == "github_output")
    except InputError as exc:
        if flag == "output":
            raise InputError("output path must stay inside the project", exc.human) from None
        raise


def check_outputs(args: argparse.Namespace, root: Path) -> None:
    """Refuse a bad output path now, not after a paid-for live run."""
    from behavegate.files import check_output

    for flag in OUTPUT_FLAGS:
        if getattr(args, flag, None):
            check_output(place_flag(args, flag, root), "--" + flag.replace("_", "-"))


def show_output(args: argparse.Namespace, output: str | Iterable[str], root: Path, console: Console, noun: str) -> dict[str, str]:
    """The rendered run (a text, or a JSON document in pieces) on the console, or in
    ``--output``; the files written, by output name."""
    from behavegate.files import write_file

    written: dict[str, str] = {}
    if args.output:
        place = place_flag(args, "output", root)
        write_file(place, output.rstrip() + "\n" if isinstance(output, str) else itertools.chain(output, ["\n"]), "--output")
        written["report"] = str(place.path)  # shown relative to the workspace by outputs.step_paths
        if args.format == "table":
            console.out(f"Wrote agent behavior {noun}: {place.path}")
    elif args.format == "json":
        console.json(output)
    else:
        console.out(output if isinstance(output, str) else "".join(output))
    return written


def show_and_deliver(
    args: argparse.Namespace,
    output: str | Iterable[str],
    root: Path,
    console: Console,
    noun: str,
    ci: Callable[[dict[str, str]], None],
) -> None:
    """The run shown (:func:`show_output`), then ``ci`` given the files written. With JSON on
    stdout the CI files come first: one that cannot be written (a full disk) then leaves the
    error's JSON document alone on stdout, never the report's followed by the error's."""
    if args.format == "json" and not args.output:
        ci({})
        show_output(args, output, root, console, noun)
        return
    ci(show_output(args, output, root, console, noun))


def detail(args: argparse.Namespace) -> str:
    """``--quiet`` / ``--verbose`` for the table (quiet wins when both are given)."""
    return "quiet" if getattr(args, "quiet", False) else "verbose" if getattr(args, "verbose", False) else "normal"

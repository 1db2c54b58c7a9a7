"""Where a run's output flags write, under the one path rule (``files.place_output``),
checked before any work is paid for."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from behavegate.errors import InputError
from behavegate.files import Place

OUTPUT_FLAGS = ("output", "report", "junit", "summary", "github_output", "save_observations")


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

"""``behavegate init``: write a starter contract."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from behavegate.errors import BehavegateError, ExitCode
from behavegate.github.console import Console


def run(args: argparse.Namespace, console: Console) -> int:
    from behavegate.contract.starter import STARTER_CONTRACT, STARTER_CONTRACT_V2
    from behavegate.files import place_output, write_file

    root = Path.cwd().resolve()
    try:
        place = place_output(args.path, root, "--path", os.environ, root)  # the one path rule (docs/cli.md)
        destination = place.path
        try:
            text = STARTER_CONTRACT_V2 if args.contract_version == 2 else STARTER_CONTRACT
            write_file(place, text, "--path", overwrite=bool(args.force))
        except FileExistsError:
            console.err(f"Could not create agent behavior contract: contract already exists: {destination}; "
                        "use --force to overwrite")  # fmt: skip
            return ExitCode.INCOMPLETE
    except (BehavegateError, OSError) as exc:
        console.err(f"Could not create agent behavior contract: {exc}")
        return ExitCode.INCOMPLETE
    console.out(f"Created agent behavior contract: {destination}\n"
                "Run it with: behavegate test --observations FILE  (or --allow-contract-endpoint for live)")  # fmt: skip
    return ExitCode.PASS

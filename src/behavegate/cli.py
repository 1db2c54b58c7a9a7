"""The command line: argparse and dispatch to ``commands/``, one module per
command. Everything it prints goes through the output boundary (argparse's
help and usage errors included); an unexpected exception becomes a message and
exit 2, never a traceback. Commands are imported on demand so ``behavegate
--version`` starts fast.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import sys

from behavegate import __version__
from behavegate.commands.arguments import COMMANDS, add_commands, parsed
from behavegate.errors import ExitCode
from behavegate.github.console import ArgumentParser, Console, ParserExit

COMMAND_NAMES = frozenset(name for name, _ in COMMANDS)


def build_parser(console: Console | None = None, argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given ``argv`` that names a command first, only that command's (the
    others are neither shown nor read: their options are never asked for)."""
    parser = ArgumentParser(
        console=console,
        prog="behavegate",
        description="Test what a running AI agent does against a behavior contract.",
    )
    parser.add_argument("--version", action="version", version=f"behavegate {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    named = argv[0] if argv and argv[0] in COMMAND_NAMES else None
    add_commands(commands, parser.console, named)
    return parser


def main(argv: list[str] | None = None) -> int:
    # A run builds millions of small records that live to its end; the default young-generation
    # threshold (700) re-scans them over and over (bench/bench_scale.py: ~20% of a 2,000-scenario
    # run). Collections still happen, just in larger steps: peak memory measured unchanged.
    gc.set_threshold(100_000, 50, 100)
    console = Console()
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(console, argv)
    try:
        args = parser.parse_args(argv)
    except ParserExit as exit_:
        return exit_.code
    commands = {
        name: f"behavegate.commands.{name}"
        for name in ("test", "watch", "merge", "init", "replay", "show", "traces", "validate", "view")
    } | {"list": "behavegate.commands.listing"}
    if args.command not in commands:
        console.out(parser.format_help())
        return ExitCode.INCOMPLETE
    command = None
    with console.capturing_library_output():
        try:
            command = parsed(args)  # every option read once, into the command's frozen value
            # Imported on demand so that ``behavegate --version`` starts fast.
            module = importlib.import_module(commands[args.command])
            return int(module.run(command, console))
        except KeyboardInterrupt:
            console.err("behavegate: interrupted")
            return 130
        except Exception as exc:  # never a traceback to a user
            if os.environ.get("BEHAVEGATE_DEBUG"):
                raise
            console.err(f"behavegate: internal error: {type(exc).__name__}: {exc}")
            console.err("behavegate: set BEHAVEGATE_DEBUG=1 to see the traceback, and please report it")
            from behavegate.commands.invocation import MergeCommand, TestCommand

            if isinstance(command, TestCommand | MergeCommand):
                from behavegate.commands.test import report_error_to_ci

                with contextlib.suppress(Exception):  # the error is reported above; nothing more can be done
                    report_error_to_ci(command, exc, console)
            return ExitCode.INCOMPLETE

"""Where a run's output flags write, under the one path rule (``files.place_output``),
checked before any work is paid for; and the rendered run shown or written there."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from behavegate.errors import InputError, OutputClash
from behavegate.files import Place

if TYPE_CHECKING:
    from behavegate.github.console import Console
    from behavegate.github.views import OutputPaths, Views


def place_flag(paths: OutputPaths, flag: str, root: Path) -> Place:
    """Where ``--flag``'s file goes (asked only of a flag that was given). ``--output``
    keeps skylos's JSON error words."""
    from behavegate.files import place_output

    label = "--" + flag.replace("_", "-")
    path = paths.by_flag()[flag]
    if path is None:
        raise ValueError(f"{label} was not given")  # a caller's mistake, never the user's
    try:
        return place_output(path, root, label, os.environ, root, append=flag == "github_output")
    except InputError as exc:
        if flag == "output":
            raise InputError("output path must stay inside the project", exc.human) from None
        raise


def check_outputs(paths: OutputPaths, root: Path, inputs: Mapping[str, Path | None] | None = None) -> None:
    """Refuse a bad output path now, not after a paid-for live run: each one by the path rule,
    and any two flags that would replace the same file (the later file silently took the
    earlier one's place: a JUnit file holding the summary), or a file the run reads
    (``inputs``, by what names it: the report written over the observations it judged)."""
    from behavegate.files import check_output

    seen: dict[tuple[object, ...], tuple[str, bool]] = {}  # a file -> the flag (or the input) naming it, appended to
    for name, read in (inputs or {}).items():
        if read is not None:
            seen.setdefault(_same_file_key(Path(os.path.abspath(read))), (name, False))
    for flag, path in paths.by_flag().items():
        if path:
            label = "--" + flag.replace("_", "-")
            place = place_flag(paths, flag, root)
            check_output(place, label)
            key = _same_file_key(place.path)
            other, appended = seen.setdefault(key, (flag, place.append))
            if other == flag or (appended and place.append and other in paths.by_flag()):
                continue  # the runner's files ($GITHUB_STEP_SUMMARY, $GITHUB_OUTPUT) take appends from several flags
            if other in paths.by_flag():
                shown = "--" + other.replace("_", "-")
                raise OutputClash(f"{label} {path} names the same file as {shown}: one would replace the other", (other, flag))
            raise OutputClash(f"{label} {path} names the file of {other}: the run would write over what it reads", (flag,))


def check_included_outputs(paths: OutputPaths, root: Path, contract_path: Path, included: Iterable[str]) -> None:
    """Refuse an output flag naming a file the contract reads (its golden set, an included
    library), found only once the contract is loaded; as :func:`check_outputs` words it."""
    read = {f"the contract's {name}": contract_path.parent / name for name in included if not name.startswith("builtin:")}
    if read:
        check_outputs(paths, root, read)


def _same_file_key(path: Path) -> tuple[object, ...]:
    """What identifies the file at ``path``: its device and inode when it exists (a hard link,
    another spelling of the name), else its absolute path."""
    try:
        info = os.stat(path)
    except OSError:
        return ("path", str(path))
    return ("inode", info.st_dev, info.st_ino)


def show_output(views: Views, output: str | Iterable[str], root: Path, console: Console, noun: str) -> dict[str, str]:
    """The rendered run (a text, or a JSON document in pieces) on the console, or in
    ``--output``; the files written, by output name."""
    from behavegate.files import write_file

    written: dict[str, str] = {}
    if views.paths.output:
        place = place_flag(views.paths, "output", root)
        write_file(place, output.rstrip() + "\n" if isinstance(output, str) else itertools.chain(output, ["\n"]), "--output")
        written["report"] = str(place.path)  # shown relative to the workspace by outputs.step_paths
        if views.format == "table":
            console.out(f"Wrote agent behavior {noun}: {place.path}")
    elif views.format == "json":
        console.json(output)
    else:
        console.out(output if isinstance(output, str) else "".join(output))
    return written


def show_and_deliver(
    views: Views,
    output: str | Iterable[str],
    root: Path,
    console: Console,
    noun: str,
    ci: Callable[[dict[str, str]], None],
) -> None:
    """The run shown (:func:`show_output`), then ``ci`` given the files written. With JSON on
    stdout the CI files come first: one that cannot be written (a full disk) then leaves the
    error's JSON document alone on stdout, never the report's followed by the error's."""
    if views.format == "json" and not views.paths.output:
        ci({})
        show_output(views, output, root, console, noun)
        return
    ci(show_output(views, output, root, console, noun))

"""Project-confined file reading and atomic writing (the filesystem edge).

Paths given on the command line must stay lexically inside the project root,
never pass through a symlink, and are read without following links.

Every file behavegate writes goes through ``write_file``: the path is placed
by one rule (``place_output``), each directory below its base is opened
O_NOFOLLOW relative to its parent's descriptor (no lexical check can race),
and the file goes to a temporary name renamed into place, or, for the
runner's own ``$GITHUB_OUTPUT``/``$GITHUB_STEP_SUMMARY``, is appended to with
O_NOFOLLOW and must be a regular file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from behavegate.errors import InputError
from behavegate.frozen import Frozen

RUNNER_FILES = ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")
# Directories the runner gives a job besides the project (a working-directory below
# the workspace is the project; the workspace and the runner's temp are still the job's).
RUNNER_DIRS = ("RUNNER_TEMP", "GITHUB_WORKSPACE")
OUTPUT_RULE = (
    "files are written inside the project, under $RUNNER_TEMP or $GITHUB_WORKSPACE, or to the runner's "
    "$GITHUB_OUTPUT/$GITHUB_STEP_SUMMARY, never through a symlink"
)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)

DISCOVERY_PATHS = (".behavegate/contract.yml", ".skylos/agent-test.yml")
DEFAULT_CONTRACT_PATH = DISCOVERY_PATHS[0]


def runner_dirs(environ: Mapping[str, str]) -> tuple[Path, ...]:
    """``$RUNNER_TEMP`` and ``$GITHUB_WORKSPACE`` when set to absolute paths."""
    return tuple(Path(environ[name]) for name in RUNNER_DIRS if environ.get(name) and Path(environ[name]).is_absolute())


def resolve_inside(path: str | Path, root: Path, label: str, bases: tuple[Path, ...] = ()) -> Path:
    """Return ``path`` under ``root`` (or one of ``bases``) or raise; ``label`` names it.

    The ``message`` keeps skylos's words (the JSON ``error``); the human text names
    the path and the project root it was measured against."""
    if "\x00" in str(path):  # the OS would refuse it with a ValueError mid-run
        raise InputError(f"{label} must not contain a NUL character")
    candidate = Path(path).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    for base in (root, *bases):
        try:
            relative = candidate.relative_to(base)
        except ValueError:
            continue
        if relative.parts and not any(part in {"", ".", ".."} for part in relative.parts):
            return base.joinpath(*relative.parts)
    also = "".join(f", or under {base}" for base in bases)
    raise InputError(
        f"{label} must stay inside the project",
        f"{label} {path} is outside the project root {root}{also}; relative paths are read from the project root, "
        "'..' is refused",
    )


def base_of(path: Path, root: Path, bases: tuple[Path, ...] = ()) -> Path:
    """The allowed directory ``path`` (from ``resolve_inside``) lies under."""
    for base in (root, *bases):
        if path.is_relative_to(base):
            return base
    return root


def reject_symlinks(path: Path, root: Path, label: str) -> None:
    current = root
    try:
        for part in path.relative_to(root).parts:
            current = current / part
            if current.is_symlink():
                if current == path:
                    raise InputError(f"{label} must not be a symlink", f"{label} {path} must not be a symlink")
                raise InputError(
                    f"{label} must not use symlink parent directories",
                    f"{label} {path} must not pass through the symlink {current}",
                )
    except OSError:
        raise InputError(f"Could not inspect {label.lower()}: {path}") from None


def read_project_text(path: str | Path, root: Path, label: str, max_bytes: int, bases: tuple[Path, ...] = ()) -> tuple[Path, str]:
    """Read a UTF-8 text file inside the project (or ``bases``), newline-normalised.

    Returns the resolved path and its text. Any problem (missing, not regular, a
    link, too large, not UTF-8) is one message worded as skylos words it, with
    a human text naming the path and the cause.
    """
    resolved = resolve_inside(path, root, label, bases)
    reject_symlinks(resolved, base_of(resolved, root, bases), label)
    try:
        return resolved, _read_no_follow(resolved, max_bytes)
    except _Unreadable as why:
        where = "" if Path(path).is_absolute() else f" (relative paths are read from the project root {root})"
        raise InputError(
            f"{label} must be a regular non-symlink file no larger than {max_bytes} bytes", f"{label} {why}{where}"
        ) from None


class _Unreadable(Exception):
    """Why a file could not be read, worded to follow its label ("not found: PATH")."""


def _read_no_follow(path: Path, max_bytes: int) -> str:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise _Unreadable(f"not found: {path}") from None
    except OSError as exc:
        raise _Unreadable(f"could not be opened: {path}: {exc.strerror}") from None
    too_large = f"{path} is larger than {max_bytes} bytes"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _Unreadable(f"{path} is not a regular file")
        if info.st_size > max_bytes:
            raise _Unreadable(too_large)
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            data = handle.read(max_bytes + 1)
        if len(data) > max_bytes:  # it grew since fstat
            raise _Unreadable(too_large)
        text = data.decode("utf-8")
    except UnicodeError:
        raise _Unreadable(f"{path} is not UTF-8 text") from None
    except OSError as exc:
        raise _Unreadable(f"could not be read: {path}: {exc.strerror}") from None
    finally:
        if fd >= 0:
            os.close(fd)
    # Universal newlines, as text mode reads them (one pass over a file that has none).
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


class ProjectLines:
    """A text file inside the project read a line at a time, under the rules of
    :func:`read_project_text` (no link, a regular file, the size cap, UTF-8, universal
    newlines); ``digest`` is then the SHA-256 of the text that function returns."""

    def __init__(self, path: str | Path, root: Path, label: str, max_bytes: int, bases: tuple[Path, ...] = ()) -> None:
        self.path = resolve_inside(path, root, label, bases)
        reject_symlinks(self.path, base_of(self.path, root, bases), label)
        self.label, self.max_bytes = label, max_bytes
        self._hasher = hashlib.sha256()

    def lines(self) -> Iterator[str]:
        """Each line without its newline. A lone carriage return (a line break to text mode,
        not to this reader) or bytes past the cap raise InputError."""
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.path, flags)
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > self.max_bytes:
                raise InputError(f"{self.label} must be a regular non-symlink file no larger than {self.max_bytes} bytes")
            seen = 0
            for raw in handle:
                seen += len(raw)
                if seen > self.max_bytes:
                    raise InputError(f"{self.label} must be a regular non-symlink file no larger than {self.max_bytes} bytes")
                line = raw[:-2] + b"\n" if raw.endswith(b"\r\n") else raw
                if b"\r" in line:
                    raise InputError(f"{self.label} holds a carriage return that is not part of a line end")
                self._hasher.update(line)
                yield line.rstrip(b"\n").decode("utf-8")

    @property
    def digest(self) -> str:
        return self._hasher.hexdigest()


def discover_contract(start: Path) -> tuple[Path, Path] | None:
    """Walk upward from ``start``; return (contract path, project root) or None."""
    for directory in (start, *start.parents):
        for relative in DISCOVERY_PATHS:
            candidate = directory / relative
            if candidate.exists() or candidate.is_symlink():
                return candidate, directory
    return None


class Place(Frozen):
    """Where a file goes: ``parts`` below a trusted ``base`` directory.

    ``append`` marks a runner-provided file (appended to, never created
    directories for); otherwise the file is ours and replaced atomically.
    """

    base: Path
    parts: tuple[str, ...]
    append: bool = False

    @property
    def path(self) -> Path:
        return self.base.joinpath(*self.parts)


def place_output(
    path: str | Path, root: Path, label: str, environ: Mapping[str, str], cwd: Path, *, append: bool = False
) -> Place:
    """Apply the output rule to a path from the command line (relative to ``cwd``).

    Inside the project (``root``) or under ``$RUNNER_TEMP``/``$GITHUB_WORKSPACE``: every component is
    checked, missing directories are created. Exactly the runner's
    ``$GITHUB_OUTPUT``/``$GITHUB_STEP_SUMMARY`` (which live outside the
    workspace): appended to. Anything else is refused, naming path and rule.
    ``append``: the file is appended to wherever it is (step outputs).
    """
    candidate = _absolute(Path(path).expanduser(), cwd)
    if candidate is None:
        raise InputError(f"{label} {path} must not contain '..'; {OUTPUT_RULE}")
    runner = {_absolute(Path(environ[name]), cwd) for name in RUNNER_FILES if environ.get(name)}
    if candidate in runner:
        return Place(candidate.parent, (candidate.name,), append=True)
    for base in (root, *runner_dirs(environ)):
        try:
            relative = candidate.relative_to(base)
        except ValueError:
            continue
        if relative.parts:
            return Place(base, relative.parts, append=append)
    raise InputError(f"{label} {path} is outside the project ({root}); {OUTPUT_RULE}")


def check_output(place: Place, label: str) -> None:
    """Refuse now what ``write_file`` would refuse later (a link on the way, a final
    name that is not a regular file), so a live run is not paid for and then lost.
    ``write_file`` still checks again, by descriptor, when it writes."""
    current = place.base
    for index, part in enumerate(place.parts):
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return  # created when written
        except OSError as exc:
            raise InputError(f"could not write {label} {place.path}: {exc.strerror}") from None
        last = index == len(place.parts) - 1
        if stat.S_ISLNK(info.st_mode):
            what = "must not be a symlink" if last else "must not use symlink parent directories"
            raise InputError(f"{label} {place.path} {what}; {OUTPUT_RULE}")
        if last and not stat.S_ISREG(info.st_mode):
            raise InputError(f"{label} {place.path} must be a regular file")
        if not last and not stat.S_ISDIR(info.st_mode):
            raise InputError(f"could not write {label} {place.path}: {current} is not a directory")


def _absolute(path: Path, cwd: Path) -> Path | None:
    """``path`` made absolute without touching the filesystem; None if it has ``..``."""
    if ".." in path.parts:
        return None
    return path if path.is_absolute() else cwd / path


def write_file(place: Place, text: str | Iterable[str], label: str, *, overwrite: bool = True) -> None:
    """Write ``text`` (or its pieces, in order) at ``place`` without following any link below its base.

    Ours: parent directories created 0700, the file written 0600 to a
    temporary name and renamed into place (``overwrite=False``: only if the
    name is free). Runner files: O_APPEND|O_NOFOLLOW, regular files only.
    Raises InputError naming the path; FileExistsError when not overwriting.
    """
    try:
        fd = os.open(place.base, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(f"could not write {label} {place.path}: {exc.strerror}") from None
    try:
        for part in place.parts[:-1]:
            if not place.append:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o700, dir_fd=fd)
            child = _descend(fd, part, place, label)
            os.close(fd)
            fd = child
        name = place.parts[-1]
        if place.append:
            _append_at(fd, name, text if isinstance(text, str) else "".join(text), place, label)
        else:
            _replace_at(fd, name, text, place, label, overwrite=overwrite)
    except FileExistsError:
        raise
    except InputError:
        raise
    except (OSError, UnicodeError) as exc:
        raise InputError(f"could not safely write {label} {place.path}: {getattr(exc, 'strerror', None) or exc}") from None
    finally:
        os.close(fd)


def _descend(fd: int, part: str, place: Place, label: str) -> int:
    if stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
        raise InputError(f"{label} {place.path} must not use symlink parent directories; {OUTPUT_RULE}")
    return os.open(part, _DIR_FLAGS, dir_fd=fd)  # O_NOFOLLOW: a link swapped in meanwhile fails


def _refuse_link(fd: int, name: str, place: Place, label: str) -> os.stat_result | None:
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise InputError(f"{label} {place.path} must not be a symlink; {OUTPUT_RULE}")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{label} {place.path} must be a regular file")
    return info


def _append_at(fd: int, name: str, text: str, place: Place, label: str) -> None:
    _refuse_link(fd, name, place, label)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    out = os.open(name, flags | getattr(os, "O_CLOEXEC", 0), 0o600, dir_fd=fd)
    with os.fdopen(out, "w", encoding="utf-8", newline="") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise InputError(f"{label} {place.path} must be a regular file")
        handle.write(text)


def _replace_at(fd: int, name: str, text: str | Iterable[str], place: Place, label: str, *, overwrite: bool) -> None:
    if _refuse_link(fd, name, place, label) is not None and not overwrite:
        raise FileExistsError(str(place.path))
    temp = f".{name}.{os.urandom(16).hex()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    out = os.open(temp, flags, 0o600, dir_fd=fd)
    try:
        with os.fdopen(out, "w", encoding="utf-8", newline="") as handle:
            for piece in [text] if isinstance(text, str) else text:
                handle.write(piece)
            handle.flush()
            os.fsync(handle.fileno())
        if overwrite:
            os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)  # replaces a link swapped in, never writes through it
        else:
            os.link(temp, name, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)  # fails if the name was taken meanwhile
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=fd)


def read_placed(place: Place, max_bytes: int) -> str | None:
    """Read back a file we wrote, by the same walk (no link followed below the
    base); None when it is missing, a link, not regular, too large or not UTF-8."""
    try:
        fd = os.open(place.base, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        for part in place.parts[:-1]:
            child = _descend(fd, part, place, "file")
            os.close(fd)
            fd = child
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        with os.fdopen(os.open(place.parts[-1], flags, dir_fd=fd), "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
                return None
            return handle.read(max_bytes + 1).decode("utf-8")
    except (OSError, UnicodeError, InputError):
        return None
    finally:
        os.close(fd)


def write_project_text(path: Path, root: Path, text: str, *, overwrite: bool = True) -> None:
    """Atomically write ``text`` (mode 0600) at ``path`` inside ``root`` (see ``write_file``)."""
    write_file(Place(root, path.relative_to(root).parts), text, "output", overwrite=overwrite)


def walk_files(folder: Path, suffixes: tuple[str, ...], skip: frozenset[str] = frozenset()) -> Iterator[Path]:
    """Files under ``folder`` whose names end with one of ``suffixes``, in name order; hidden
    entries and symlinks are never followed (a folder of evidence may hold anything), nor
    folders named in ``skip``."""
    with os.scandir(folder) as entries:
        listed = sorted(entries, key=lambda e: e.name)
    for entry in listed:
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            if entry.name not in skip:
                yield from walk_files(Path(entry.path), suffixes, skip)
        elif entry.is_file(follow_symlinks=False) and entry.name.endswith(suffixes):
            yield Path(entry.path)

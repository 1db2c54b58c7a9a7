"""Project-confined file reading and atomic writing (the filesystem edge).

Paths given on the command line must stay lexically inside the project root,
never pass through a symlink, and are read without following links. Writes go
to a temporary file in the same directory and are renamed into place.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from behavegate.errors import InputError

DISCOVERY_PATHS = (".behavegate/contract.yml", ".skylos/agent-test.yml")
DEFAULT_CONTRACT_PATH = DISCOVERY_PATHS[0]


def resolve_inside(path: str | Path, root: Path, label: str) -> Path:
    """Return ``path`` under ``root`` or raise; ``label`` names it in messages."""
    candidate = Path(path).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        relative = candidate.relative_to(root)
    except ValueError:
        raise InputError(f"{label} must stay inside the project") from None
    if not relative.parts or any(part in {"", ".", ".."} for part in relative.parts):
        raise InputError(f"{label} must stay inside the project")
    return root.joinpath(*relative.parts)


def reject_symlinks(path: Path, root: Path, label: str) -> None:
    current = root
    try:
        for part in path.relative_to(root).parts:
            current = current / part
            if current.is_symlink():
                if current == path:
                    raise InputError(f"{label} must not be a symlink")
                raise InputError(f"{label} must not use symlink parent directories")
    except OSError:
        raise InputError(f"Could not inspect {label.lower()}: {path}") from None


def read_project_text(path: str | Path, root: Path, label: str, max_bytes: int) -> tuple[Path, str]:
    """Read a UTF-8 text file inside the project, newline-normalised.

    Returns the resolved path and its text. Any problem (not regular, a link,
    too large, not UTF-8) is one message, worded as skylos words it.
    """
    resolved = resolve_inside(path, root, label)
    reject_symlinks(resolved, root, label)
    text = _read_no_follow(resolved, max_bytes)
    if text is None:
        raise InputError(f"{label} must be a regular non-symlink file no larger than {max_bytes} bytes")
    return resolved, text


def _read_no_follow(path: Path, max_bytes: int) -> str | None:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        with os.fdopen(fd, "r", encoding="utf-8", newline=None) as handle:
            fd = -1
            text = handle.read(max_bytes + 1)
    except (OSError, UnicodeError):
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(text.encode("utf-8")) > max_bytes:
        return None
    return text


def discover_contract(start: Path) -> tuple[Path, Path] | None:
    """Walk upward from ``start``; return (contract path, project root) or None."""
    for directory in (start, *start.parents):
        for relative in DISCOVERY_PATHS:
            candidate = directory / relative
            if candidate.exists() or candidate.is_symlink():
                return candidate, directory
    return None


def write_project_text(path: Path, root: Path, text: str, *, overwrite: bool = True) -> None:
    """Atomically write ``text`` (mode 0600) at ``path`` inside ``root``.

    Missing parent directories are created 0700; no component may be a link;
    an existing non-regular destination is refused.
    """
    relative = path.relative_to(root)
    current = root
    try:
        for part in relative.parts[:-1]:
            current = current / part
            if current.is_symlink():
                raise InputError("output parent must not be a symlink")
            current.mkdir(mode=0o700, exist_ok=True)
        _replace_file(path, text, overwrite=overwrite)
    except FileExistsError:
        raise
    except (OSError, UnicodeError):
        raise InputError(f"could not safely write {path}") from None


def _replace_file(path: Path, text: str, *, overwrite: bool) -> None:
    try:
        existing = os.lstat(path)
    except FileNotFoundError:
        existing = None
    if existing is not None:
        if not overwrite:
            raise FileExistsError(str(path))
        if not stat.S_ISREG(existing.st_mode):
            raise OSError("output destination is not a regular file")
    temp = path.with_name(f".{path.name}.{os.urandom(16).hex()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temp, flags, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if not overwrite:
            os.link(temp, path)  # fails if something appeared meanwhile
        else:
            os.replace(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)

"""Writing output files without destroying anything: the ``--out`` rule of every command.

* An analysed input is never overwritten, ``--force`` or not (``d2k-analyze x/ --out
  x/submission.py`` is refused before any work is done).
* An existing file is overwritten only if a d2k command wrote it and nobody changed it since, or
  with ``--force``. "A d2k command wrote it" is recorded in a small manifest beside the outputs
  (``.d2k-outputs.json``: file name -> SHA-256 of the bytes written), so re-running a command
  into the same place just works, while a user's own ``report.md`` is safe.
* Every write is atomic: the text goes to a temporary file in the same folder, is flushed to disk
  and renamed over the target, so a crash or Ctrl-C leaves the old file or the new one, never half
  of one.
* A missing output folder is created (all commands alike).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Callable, Iterable

MANIFEST = ".d2k-outputs.json"


class OutputRefused(FileExistsError):
    """Writing there would destroy an input or a file the tool did not write (a usage error). A
    FileExistsError, so that a command which already treats an existing output as a usage error
    reports this one the same way."""


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_manifest(folder: Path) -> dict[str, str]:
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def written_by_tool(path: Path) -> bool:
    """True when ``path`` holds exactly the bytes a d2k command last wrote there."""
    recorded = _read_manifest(path.parent).get(path.name)
    if recorded is None:
        return False
    try:
        return _digest(path.read_bytes()) == recorded
    except OSError:
        return False


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def check_target(target: Path, *, force: bool, inputs: Iterable[Path] = (),
                 is_input: Callable[[Path], bool] | None = None) -> None:
    """Raise :class:`OutputRefused` if writing ``target`` is not allowed (see the module doc).
    The analysed inputs are ``inputs`` (files), or whatever ``is_input`` says is one (cheaper than
    listing a large tree)."""
    target = Path(target)
    if any(_same_file(target, Path(src)) for src in inputs) or (is_input is not None and is_input(target)):
        raise OutputRefused(f"{target} is one of the analysed inputs: choose another output file")
    if target.is_dir():
        raise OutputRefused(f"{target} is a folder: give a file name")
    if (target.exists() or target.is_symlink()) and not force and not written_by_tool(target):
        raise OutputRefused(f"{target} exists and was not written by d2k: use --force to overwrite it")


def check_folder(folder: Path, names: Iterable[str], *, force: bool, inputs: Iterable[Path] = ()) -> None:
    """:func:`check_target` for every file a command writes into ``folder``."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise OutputRefused(f"{folder} exists and is not a folder")
    inputs = list(inputs)
    for name in names:
        check_target(folder / name, force=force, inputs=inputs)


def record(path: Path) -> None:
    """Note in the folder's manifest that ``path``'s current bytes were written by a d2k command
    (for files a command writes by other means, e.g. an append-only log)."""
    path = Path(path)
    _remember(path, _digest(path.read_bytes()))


def _remember(path: Path, digest: str) -> None:
    manifest = _read_manifest(path.parent)
    manifest[path.name] = digest
    _replace(path.parent / MANIFEST, (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode("utf-8"))


def _file_mode(target: Path) -> int:
    """Keep an existing file's permissions; a new file gets the usual 0666 minus the umask."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _replace(target: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _file_mode(target))
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text(target: Path, text: str) -> None:
    """Write ``text`` atomically (creating missing folders) and record it as the tool's own."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    _replace(target, data)
    _remember(target, _digest(data))

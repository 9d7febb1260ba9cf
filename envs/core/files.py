"""Files, so that no work is ever lost and nothing read is trusted: atomic writes, a fresh folder or file name
for every new result, and the checks every reader of others' files shares (regular files, JSON documents).

Here in ``envs/core`` because game records are read and written by the engine side; ``training`` imports it.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any


def atomic_write(path: str | Path, payload: bytes) -> None:
    """Write via a temporary file and rename, so a killed run never leaves half a file behind (and a
    stopped one no temporary file either)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_bytes(payload)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def new_folder(wanted: str | Path) -> Path:
    """Create and return ``wanted``, or if it exists and is not empty ``wanted-2``, ``wanted-3``, …

    Creating the folder claims it, so two runs started at once never share one; an earlier run's folder
    is never reused.
    """
    wanted = Path(wanted)
    wanted.parent.mkdir(parents=True, exist_ok=True)
    if wanted.is_dir() and not any(wanted.iterdir()):
        return wanted
    k = 1
    while True:
        folder = wanted if k == 1 else wanted.with_name(f"{wanted.name}-{k}")
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            k += 1


def write_new(wanted: str | Path, payload: bytes) -> Path:
    """Write ``payload`` to ``wanted`` (its folder created if need be) or, if that file exists, to
    ``<stem>-2<suffix>``, ``-3``, …; never overwrites a file. Returns the path written.

    Creating the file claims its name (two writers never share one), and it is then filled atomically; a
    write that fails or is stopped removes it again."""
    wanted = Path(wanted)
    wanted.parent.mkdir(parents=True, exist_ok=True)
    k = 1
    while True:
        path = wanted if k == 1 else wanted.with_name(f"{wanted.stem}-{k}{wanted.suffix}")
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
            break
        except FileExistsError:
            k += 1
    try:
        atomic_write(path, payload)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path


def file_kind(mode: int) -> str:
    """What a path that is not a regular file is, from its ``st_mode``: never opened, since reading a FIFO
    would block and a device may never end."""
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a device"),
             (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "a special file")


def parse_json(text: str | bytes) -> Any:
    """The JSON document ``text`` (bytes are read as UTF-8), or ``ValueError`` saying in a few words why it is
    none: the decoder's message, ``not UTF-8 text``, ``nested too deeply`` or ``an integer has too many digits``
    (Python refuses to convert integers of more than ``sys.get_int_max_str_digits()`` digits)."""
    try:
        return json.loads(text.decode() if isinstance(text, bytes) else text)
    except RecursionError:
        reason = "nested too deeply"
    except json.JSONDecodeError as error:
        reason = str(error)
    except UnicodeDecodeError:
        reason = "not UTF-8 text"
    except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits)
        reason = "an integer has too many digits"
    raise ValueError(reason)

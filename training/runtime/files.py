"""Writing files so that no work is ever lost: atomic writes, and a fresh folder for every new run."""

from __future__ import annotations

from pathlib import Path


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

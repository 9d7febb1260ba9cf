"""How to install one of the package's extras, said so that it works where this copy of tabletop_rl lives: a source
checkout (an editable install included) installs its own folder, an installed copy names the package."""

from __future__ import annotations

import os
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]  # envs/core/extras.py → the repository, in a checkout


def install_hint(extra: str) -> str:
    """``pip install -e '.[extra]'`` in a checkout (its path instead of ``.`` from another folder), else
    ``pip install 'tabletop-rl[extra]'``."""
    if not (CHECKOUT / "pyproject.toml").is_file() or not (CHECKOUT / "envs").is_dir():
        return f"pip install 'tabletop-rl[{extra}]'"
    here = Path(os.getcwd()).resolve() == CHECKOUT
    return f"pip install -e '{'.' if here else CHECKOUT}[{extra}]'"

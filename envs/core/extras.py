"""How to install one of the package's extras, said so that it works where this copy of tabletop_rl lives: a source
checkout (an editable install included) installs its own folder, an installed copy names the package."""

from __future__ import annotations

import os
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]  # envs/core/extras.py → the repository, in a checkout


def in_checkout() -> bool:
    """Is this copy a source checkout (pyproject.toml beside envs/), not an installed one?"""
    return (CHECKOUT / "pyproject.toml").is_file() and (CHECKOUT / "envs").is_dir()


def install_hint(extra: str) -> str:
    """``pip install -e '.[extra]'`` in a checkout (its path instead of ``.`` from another folder), else
    ``pip install 'tabletop-rl[extra]'``."""
    if not in_checkout():
        return f"pip install 'tabletop-rl[{extra}]'"
    here = Path(os.getcwd()).resolve() == CHECKOUT
    return f"pip install -e '{'.' if here else CHECKOUT}[{extra}]'"


def needs_extra(what: str, extra: str, error: ImportError) -> ModuleNotFoundError:
    """The one-line error of ``what`` imported without its extra: which module is missing, and how to install it.
    Raise it ``from None``."""
    missing = (error.name or "a module").partition(".")[0]  # torchrl, not torchrl.envs
    return ModuleNotFoundError(f"{what} needs the '{extra}' extra ({missing} is not installed): "
                               f"{install_hint(extra)}", name=error.name)

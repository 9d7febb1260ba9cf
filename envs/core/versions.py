"""The versions a paper can cite (docs/versions.md): the package's, ``tabletop_rl.__version__`` (pyproject.toml's
``version``), and each game's, the number in its ids ``tabletop/<game>-v<version>`` (:func:`registry.game_version`).
Game records and policy files name both; :func:`warn_if_other_version` says in one line when a file was made at
another version of its game than the running one.
"""

from __future__ import annotations

import importlib.metadata
import re
import warnings

from .extras import CHECKOUT, in_checkout
from .registry import env_id, game_version

FIRST_RELEASE = "0.1.0"
"""The tabletop-rl of every record and policy file that names no versions: the first, at version 0 of every game."""


def _package_version() -> str:
    """pyproject.toml's ``version`` in a source checkout (envs/ beside it: an editable install's metadata may be
    older), the installed distribution's otherwise."""
    if in_checkout():
        text = (CHECKOUT / "pyproject.toml").read_text(encoding="utf-8")
        found = re.search(r'^version\s*=\s*"([^"]+)"', text, re.MULTILINE)
        if found:
            return found.group(1)
    try:
        return importlib.metadata.version("tabletop-rl")
    except importlib.metadata.PackageNotFoundError:  # a copy of the files, neither a checkout nor installed
        return "unknown"


PACKAGE_VERSION = _package_version()


class VersionWarning(UserWarning):
    """A game record or policy file made at another version of its game than the running one (shown as one line,
    ``warning: …``; ``warnings.simplefilter("error", VersionWarning)`` refuses such files instead)."""


def warn_if_other_version(path: object, made: str, game: str, version: int, package: str) -> None:
    """Warn if ``path`` was ``made`` ("recorded", "trained") at another ``version`` of ``game`` than the running
    one, by tabletop-rl ``package``."""
    running = game_version(game)
    if version != running:
        warnings.warn(f"{path} was {made} at {game} version {version} (tabletop-rl {package}); this is version "
                      f"{running} ({env_id(game)}), whose rules, observations or rewards differ", VersionWarning,
                      stacklevel=2)

"""The table as a picture (``State.render_rgb``, ``render_mode="rgb_array"``): the game's SVG (``State.render_svg``)
rasterised by resvg, so each game is drawn once. resvg-py and Pillow (which reads resvg's PNG) come with the
``render`` extra and are imported only here, when a picture is asked for: the light install never needs them.

Every picture of a game under given options has one size, that of its first position's picture, so that the frames
of an episode make a video: a table drawn shorter (or narrower) is padded with the table's colour below (and to the
right), one drawn taller (Palazzo's quarries and Torres' hands can grow a few rows) is scaled down to fit.

resvg draws text with the system's fonts (the SVG asks for DejaVu Sans, Verdana, Arial or any sans-serif); on a
machine without any font the picture has its shapes and colours but no words, and :func:`rasterise` warns once.
"""

from __future__ import annotations

import io
import warnings
from functools import cache
from typing import Any

import numpy as np

from .extras import install_hint
from .svg import FONT, TABLE

BACKGROUND = tuple(int(TABLE[i:i + 2], 16) for i in (1, 3, 5))
_SIZES: dict[tuple[type, str], tuple[int, int]] = {}
LETTER = (f'<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" font-family="{FONT}">'
          '<text x="2" y="14" font-size="14">H</text></svg>')
"""A letter alone on a transparent picture: resvg draws some pixel of it if it finds a font."""


def require() -> None:
    """Raise ImportError, in one line naming the extra to install, unless the rasteriser can be imported."""
    try:
        import PIL  # noqa: F401
        import resvg_py  # noqa: F401
    except ImportError as error:
        raise ImportError(f"render_mode='rgb_array' needs the SVG rasteriser (resvg-py and Pillow), which is not "
                          f"installed ({error.name} is missing): {install_hint('render')}") from None


def draw(state: Any, viewer: int | None) -> np.ndarray:
    """``state.render_svg(viewer)`` with no move marked, rasterised and fitted to the game's picture size."""
    return fit(rasterise(state.render_svg(viewer, legal=())), *size(state.game))


def rasterise(svg: str) -> np.ndarray:
    """``svg`` (a document with width and height) as an H×W×3 uint8 array, one pixel per user unit; the same
    document always gives the same pixels."""
    require()
    if not _text_is_drawn():
        warnings.warn("no font was found for the picture's text, so it shows no words: install a sans-serif font "
                      "(Debian and Ubuntu: apt install fonts-dejavu-core)", RuntimeWarning, stacklevel=2)
    return np.array(_render(svg).convert("RGB"))  # every table paints its background: no transparency to keep


def fit(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """``image`` on a ``height`` × ``width`` frame of the table's colour, at the top left; scaled down first (keeping
    its proportions) if it does not fit."""
    h, w = image.shape[:2]
    if h > height or w > width:
        from PIL import Image

        scale = min(height / h, width / w)
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        image = np.array(Image.fromarray(image).resize(size, Image.Resampling.LANCZOS))
        h, w = image.shape[:2]
    if (h, w) == (height, width):
        return image
    out = np.empty((height, width, 3), np.uint8)
    out[...] = BACKGROUND
    out[:h, :w] = image
    return out


def size(game: Any) -> tuple[int, int]:
    """Height and width of every picture of ``game``: those of its first position's (kept per game class and
    options, which ``repr(game)`` names)."""
    key = (type(game), repr(game))
    if key not in _SIZES:
        _SIZES[key] = rasterise(game.new_initial_state(0).render_svg(legal=())).shape[:2]
    return _SIZES[key]


def _render(svg: str):
    """resvg's picture of ``svg``, an RGBA Pillow image."""
    import resvg_py
    from PIL import Image

    return Image.open(io.BytesIO(resvg_py.svg_to_bytes(svg_string=svg)))


@cache
def _text_is_drawn() -> bool:
    """Whether resvg finds a font here (checked once per process)."""
    return _render(LETTER).getchannel("A").getbbox() is not None

"""A tiny numpy-only raster canvas for PettingZoo ``rgb_array`` renders.

Board-game environments draw card tables (coloured card rectangles with
labels, pile outlines, text) onto a :class:`Canvas` and hand
``Canvas.image()`` (an ``(H, W, 3)`` ``uint8`` array) back from ``render()``.
:func:`save_png` writes such an array to disk for debugging.

Everything is deliberately dependency-free apart from numpy, so rendering
works in headless training containers without pillow, pygame or matplotlib.
All drawing clips silently to the canvas: layout code can place things
partly (or wholly) off-screen without having to guard every call.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from os import PathLike

import numpy as np

Colour = tuple[int, int, int]

GLYPH_W, GLYPH_H = 5, 7

# The font as a picture: blocks of glyphs side by side, one header line naming
# the characters (each at the start of its 6-column cell) followed by the 7
# rows of those glyphs.  Keeping the bitmaps visual makes them easy to review
# and fix; they are parsed once, at import time, into boolean arrays.
_FONT_SHEET = """
0     1     2     3     4     5     6     7     8     9
.###. ..#.. .###. ##### ...#. ##### ..##. ##### .###. .###.
#...# .##.. #...# ...#. ..##. #.... .#... ....# #...# #...#
#..## ..#.. ....# ..#.. .#.#. ####. #.... ...#. #...# #...#
#.#.# ..#.. ...#. ...#. #..#. ....# ####. ..#.. .###. .####
##..# ..#.. ..#.. ....# ##### ....# #...# .#... #...# ....#
#...# ..#.. .#... #...# ...#. #...# #...# .#... #...# ...#.
.###. .###. ##### .###. ...#. .###. .###. .#... .###. .##..

A     B     C     D     E     F     G     H     I     J
.###. ####. .###. ###.. ##### ##### .###. #...# .###. ..###
#...# #...# #...# #..#. #.... #.... #...# #...# ..#.. ...#.
#...# #...# #.... #...# #.... #.... #.... #...# ..#.. ...#.
##### ####. #.... #...# ####. ####. #.### ##### ..#.. ...#.
#...# #...# #.... #...# #.... #.... #...# #...# ..#.. ...#.
#...# #...# #...# #..#. #.... #.... #...# #...# ..#.. #..#.
#...# ####. .###. ###.. ##### #.... .###. #...# .###. .##..

K     L     M     N     O     P     Q     R     S     T
#...# #.... #...# #...# .###. ####. .###. ####. .#### #####
#..#. #.... ##.## #...# #...# #...# #...# #...# #.... ..#..
#.#.. #.... #.#.# ##..# #...# #...# #...# #...# #.... ..#..
##... #.... #.#.# #.#.# #...# ####. #...# ####. .###. ..#..
#.#.. #.... #...# #..## #...# #.... #.#.# #.#.. ....# ..#..
#..#. #.... #...# #...# #...# #.... #..#. #..#. ....# ..#..
#...# ##### #...# #...# .###. #.... .##.# #...# ####. ..#..

U     V     W     X     Y     Z     .     ,     :     ;
#...# #...# #...# #...# #...# ##### ..... ..... ..... .....
#...# #...# #...# #...# #...# ....# ..... ..... .##.. .##..
#...# #...# #...# .#.#. .#.#. ...#. ..... ..... .##.. .##..
#...# #...# #.#.# ..#.. ..#.. ..#.. ..... ..... ..... .....
#...# #...# #.#.# .#.#. ..#.. .#... ..... .##.. .##.. .##..
#...# .#.#. #.#.# #...# ..#.. #.... .##.. ..#.. .##.. ..#..
.###. ..#.. .#.#. #...# ..#.. ##### .##.. .#... ..... .#...

-     +     /     (     )     [     ]     =     ?     !
..... ..... ..... ...#. .#... .###. .###. ..... .###. ..#..
..... ..#.. ....# ..#.. ..#.. .#... ...#. ..... #...# ..#..
..... ..#.. ...#. .#... ...#. .#... ...#. ##### ....# ..#..
##### ##### ..#.. .#... ...#. .#... ...#. ..... ...#. ..#..
..... ..#.. .#... .#... ...#. .#... ...#. ##### ..#.. ..#..
..... ..#.. #.... ..#.. ..#.. .#... ...#. ..... ..... .....
..... ..... ..... ...#. .#... .###. .###. ..... ..#.. ..#..

#     *     >     <     |     _     %     '
.#.#. ..... .#... ...#. ..#.. ..... ##... ..#..
.#.#. ..#.. ..#.. ..#.. ..#.. ..... ##..# ..#..
##### #.#.# ...#. .#... ..#.. ..... ...#. .#...
.#.#. .###. ....# #.... ..#.. ..... ..#.. .....
##### #.#.# ...#. .#... ..#.. ..... .#... .....
.#.#. ..#.. ..#.. ..#.. ..#.. ..... #..## .....
.#.#. ..... .#... ...#. ..#.. ##### ...## .....
"""

# Drawn for characters the font lacks: a box that is visibly "not a glyph"
# and cannot be mistaken for O, 0, D or brackets.
_UNKNOWN_ROWS = (".....", "#####", "#...#", "#...#", "#...#", "#####", ".....")


def _rows_to_mask(rows) -> np.ndarray:
    return np.array([[c == "#" for c in row] for row in rows], dtype=bool)


def _parse_font(sheet: str) -> dict[str, np.ndarray]:
    """Turn ``_FONT_SHEET`` into ``{char: bool array (GLYPH_H, GLYPH_W)}``."""
    glyphs = {" ": np.zeros((GLYPH_H, GLYPH_W), dtype=bool)}
    blocks = [b.splitlines() for b in sheet.strip("\n").split("\n\n")]
    for header, *rows in blocks:
        assert len(rows) == GLYPH_H, f"font block {header!r} is not {GLYPH_H} rows"
        for i in range(0, len(header), GLYPH_W + 1):
            cells = [row[i : i + GLYPH_W] for row in rows]
            glyphs[header[i]] = _rows_to_mask(cells)
    return glyphs


GLYPHS = _parse_font(_FONT_SHEET)
UNKNOWN_GLYPH = _rows_to_mask(_UNKNOWN_ROWS)

_CARD_BORDER: Colour = (16, 16, 16)


def glyph(ch: str) -> np.ndarray:
    # Upper-case per character (not per string) so that e.g. "ß" -> "SS"
    # cannot change the string length and desynchronise text_width().
    return GLYPHS.get(ch, GLYPHS.get(ch.upper(), UNKNOWN_GLYPH))


def _paint(region: np.ndarray, colour: Colour) -> None:
    """Fill an (h, w, 3) view with one colour: paint one row, then copy it down, which is several times
    faster than broadcasting the 3-tuple over every pixel."""
    if region.size:
        region[0] = colour
        region[1:] = region[0]


class Canvas:
    """An RGB raster of ``width`` x ``height`` pixels.

    ``pixels`` is the ``(height, width, 3)`` ``uint8`` array being drawn on;
    coordinates are ``(x, y)`` with the origin at the top-left corner.
    Coordinates and sizes may be floats (they are truncated to ints), so
    layout code can divide freely.
    """

    def __init__(self, width: int, height: int, background: Colour = (24, 96, 48)):
        self.width, self.height = int(width), int(height)
        if self.width <= 0 or self.height <= 0:
            raise ValueError(f"canvas size must be positive, got {width}x{height}")
        self.pixels = np.empty((self.height, self.width, 3), dtype=np.uint8)
        _paint(self.pixels, background)

    def _clip(self, x: int, y: int, w: int, h: int) -> tuple[int, int, int, int] | None:
        """Intersect a rectangle with the canvas: ``(x0, y0, x1, y1)``, or None if empty."""
        x0, y0 = max(x, 0), max(y, 0)
        x1, y1 = min(x + w, self.width), min(y + h, self.height)
        if x0 >= x1 or y0 >= y1:
            return None
        return x0, y0, x1, y1

    def _fill(self, x: int, y: int, w: int, h: int, colour: Colour) -> None:
        box = self._clip(x, y, w, h)
        if box is not None:
            x0, y0, x1, y1 = box
            _paint(self.pixels[y0:y1, x0:x1], colour)

    def rect(
        self,
        x: int,
        y: int,
        w: int,
        h: int,
        fill: Colour | None,
        border: Colour | None = None,
        border_width: int = 1,
    ) -> None:
        """Draw a ``w`` x ``h`` rectangle with its top-left corner at ``(x, y)``.

        The border, if given, lies *inside* the rectangle, so the outer size is
        always ``w`` x ``h``.  ``fill=None`` draws only the border (e.g. an
        empty pile's outline).  Parts outside the canvas are silently clipped.
        """
        x, y, w, h, bw = int(x), int(y), int(w), int(h), int(border_width)
        if w <= 0 or h <= 0:
            return
        if border is None or bw <= 0:
            if fill is not None:
                self._fill(x, y, w, h, fill)
        elif fill is not None:
            # Paint the border colour everywhere, then the interior over it.
            self._fill(x, y, w, h, border)
            self._fill(x + bw, y + bw, w - 2 * bw, h - 2 * bw, fill)
        else:
            # Outline only: four strips.  Clamping bw keeps the far strips
            # from poking outside the rectangle when it is thinner than 2*bw.
            bw_x, bw_y = min(bw, (w + 1) // 2), min(bw, (h + 1) // 2)
            self._fill(x, y, w, bw_y, border)
            self._fill(x, y + h - bw_y, w, bw_y, border)
            self._fill(x, y, bw_x, h, border)
            self._fill(x + w - bw_x, y, bw_x, h, border)

    @staticmethod
    def text_width(s: str, scale: int = 1) -> int:
        """Width in pixels of ``s`` drawn by :meth:`text` at ``scale`` (0 for "")."""
        if not s:
            return 0
        return (len(s) * (GLYPH_W + 1) - 1) * int(scale)

    def text(self, x: int, y: int, s: str, colour: Colour = (255, 255, 255), scale: int = 1) -> int:
        """Draw ``s`` in the built-in 5x7 font with its top-left corner at ``(x, y)``.

        Glyphs are separated by one column (times ``scale``); the text is
        ``7 * scale`` pixels tall.  Lower-case letters are drawn upper-case and
        characters outside the font as a small box.  Only glyph pixels are
        painted (the background shows through).  Returns the laid-out width,
        ``text_width(s, scale)``, even if part of the text was clipped.
        """
        x, y, scale = int(x), int(y), int(scale)
        if scale < 1:
            raise ValueError(f"scale must be >= 1, got {scale}")
        width = self.text_width(s, scale)
        if not s:
            return 0
        # Assemble the whole string as one boolean mask at scale 1, then
        # upscale it with np.repeat and paint it with one masked
        # assignment, instead of blitting glyph by glyph.
        mask = np.zeros((GLYPH_H, len(s) * (GLYPH_W + 1) - 1), dtype=bool)
        for i, ch in enumerate(s):
            mask[:, i * (GLYPH_W + 1) : i * (GLYPH_W + 1) + GLYPH_W] = glyph(ch)
        if scale > 1:
            mask = mask.repeat(scale, 0).repeat(scale, 1)
        box = self._clip(x, y, mask.shape[1], mask.shape[0])
        if box is not None:
            x0, y0, x1, y1 = box
            visible = mask[y0 - y : y1 - y, x0 - x : x1 - x]
            self.pixels[y0:y1, x0:x1][visible] = colour
        return width

    def card(
        self,
        x: int,
        y: int,
        w: int,
        h: int,
        fill: Colour,
        label: str,
        text_colour: Colour = (0, 0, 0),
        scale: int = 2,
    ) -> None:
        """Draw a card: a ``fill``-coloured rectangle with a dark 1px border and
        ``label`` centred on it.

        The four corner pixels are left untouched so the card looks slightly
        rounded against whatever is underneath.  If the label does not fit
        inside the border at ``scale``, the scale is reduced (down to 1) so
        that e.g. "10" still fits on a narrow card.
        """
        x, y, w, h = int(x), int(y), int(w), int(h)
        # Border as a "plus" of two overlapping rects, skipping the corners.
        self.rect(x + 1, y, w - 2, h, _CARD_BORDER)
        self.rect(x, y + 1, w, h - 2, _CARD_BORDER)
        self.rect(x + 1, y + 1, w - 2, h - 2, fill)
        scale = int(scale)
        while scale > 1 and (self.text_width(label, scale) > w - 2 or GLYPH_H * scale > h - 2):
            scale -= 1
        tx = x + (w - self.text_width(label, scale)) // 2
        ty = y + (h - GLYPH_H * scale) // 2
        self.text(tx, ty, label, text_colour, scale)

    def legend(self, x: int, y: int, width: int, items: Sequence[LegendItem],
               colour: Colour = (225, 225, 225)) -> int:
        """Draw legend entries — an optional colour swatch and a text each — flowing left to right in rows
        within ``width``; returns the height used (:func:`legend_height`)."""
        for dx, dy, (swatch, text) in _legend_flow(items, width):
            if swatch is not None:
                self.rect(x + dx, y + dy, SWATCH, SWATCH, swatch, _CARD_BORDER)
                dx += SWATCH + 3
            self.text(x + dx, y + dy + 1, text, colour)
        return legend_height(items, width)

    def image(self) -> np.ndarray:
        """A copy of the pixels, safe to return from ``render()`` and keep."""
        return self.pixels.copy()


LegendItem = tuple[Colour | None, str]
"""A legend entry: a swatch colour (or None) and what it means."""
SWATCH, LEGEND_ROW, LEGEND_GAP = 9, 12, 14


def _legend_flow(items: Sequence[LegendItem], width: int) -> list[tuple[int, int, LegendItem]]:
    """Where each legend entry goes: rows filled left to right, a new row when the next entry does not fit."""
    out, dx, dy = [], 0, 0
    for swatch, text in items:
        w = (0 if swatch is None else SWATCH + 3) + Canvas.text_width(text)
        if dx and dx + w > width:
            dx, dy = 0, dy + LEGEND_ROW
        out.append((dx, dy, (swatch, text)))
        dx += w + LEGEND_GAP
    return out


def legend_height(items: Sequence[LegendItem], width: int) -> int:
    """Height in pixels of :meth:`Canvas.legend` for these entries in ``width`` (0 without entries)."""
    flow = _legend_flow(items, width)
    return flow[-1][1] + LEGEND_ROW if flow else 0


def save_png(pixels: np.ndarray, path: str | PathLike) -> None:
    """Write an ``(H, W, 3)`` ``uint8`` array as an 8-bit RGB PNG file.

    Uses only zlib and struct.  Every scanline uses filter type 0 (None):
    the files are a little larger than optimal, which is fine for debug
    snapshots and keeps the encoder trivial.
    """
    pixels = np.asarray(pixels)
    if pixels.ndim != 3 or pixels.shape[2] != 3 or pixels.dtype != np.uint8:
        raise ValueError(f"expected an (H, W, 3) uint8 array, got {pixels.shape} {pixels.dtype}")
    height, width = pixels.shape[:2]
    # Each scanline is prefixed with its filter-type byte (0).
    raw = np.zeros((height, 1 + 3 * width), dtype=np.uint8)
    raw[:, 1:] = pixels.reshape(height, 3 * width)

    def chunk(kind: bytes, data: bytes) -> bytes:
        # Length and CRC framing per the PNG spec; the CRC covers type + data.
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    # IHDR: width, height, bit depth 8, colour type 2 (RGB), deflate,
    # adaptive filtering method 0, no interlace.
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(raw.tobytes(), 9))
        + chunk(b"IEND", b"")
    )
    with open(path, "wb") as f:
        f.write(png)

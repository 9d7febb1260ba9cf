"""Helpers to draw a table as SVG text, standard library only; each game's ``svg(state, viewer, legal)`` (in its
``svg.py``) lays out its own table with them, in words its ``render.py`` shares with the text table.

- :class:`Svg` collects elements and returns the document. Every text and attribute value goes through
  :func:`escape`, so a text from the state (or a name a user typed) cannot break the XML.
- A colour-blind-safe palette: the eight colours of Okabe & Ito (2008), which stay distinguishable with the
  common colour-vision deficiencies; the games also put a letter on every coloured thing, so colour is never the
  only cue.
- Clickable legal moves: :meth:`Svg.spot` wraps the element an action refers to (a card, a square, a quarry) in
  ``<g class="legal" data-actions="12 37">`` and rings it; :func:`clickable` says which actions to attach.
- :meth:`Svg.card`, :meth:`Svg.back` and :meth:`Svg.legend` draw the shapes every game uses; :func:`seat_order`
  says in which order the seats are drawn.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from numbers import Integral
from typing import Any

from .layout import seats_from

# Okabe–Ito (https://jfly.uni-koeln.de/color/)
BLACK, ORANGE, SKY_BLUE, GREEN = "#000000", "#E69F00", "#56B4E9", "#009E73"
YELLOW, BLUE, VERMILLION, PURPLE = "#F0E442", "#0072B2", "#D55E00", "#CC79A7"
# neutrals of the table
TABLE, PANEL, INK, MUTED, EDGE = "#263238", "#33434b", "#F5F5F5", "#B0BEC5", "#111111"
CARD_BACK = "#5D4A66"
HIGHLIGHT = "#FFFFFF"  # the ring round a clickable element and the frame of the seat to act
MIN_TEXT = 11  # no text is drawn smaller: the web app shows a table at no less than 1 px a unit
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def escape(value: Any) -> str:
    """``value`` as text that is safe inside an element or a double-quoted attribute: ``& < > " '`` escaped, and
    characters XML 1.0 cannot hold (controls, lone surrogates) replaced by U+FFFD."""
    return html.escape(_NOT_XML.sub("\ufffd", str(value)), quote=True)


def _value(v: Any) -> str:
    if type(v) is int:
        return str(v)
    if type(v) is float:
        return f"{v:.1f}".rstrip("0").rstrip(".")
    return escape(v)


def ink(fill: str) -> str:
    """Black or white, whichever reads better on ``fill`` (``#rrggbb``)."""
    r, g, b = (int(fill[i:i + 2], 16) for i in (1, 3, 5))
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#FFFFFF"


def count(n: int, noun: str) -> str:
    """``1 card``, ``2 cards``: a number and its noun."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def text_width(text: str, size: float) -> float:
    """About how wide ``text`` is at font ``size`` (an upper estimate for the sans-serif fonts in use)."""
    return 0.62 * size * len(text)


def clickable(state: Any, viewer: int | None, legal: Iterable[int] | None) -> frozenset[int]:
    """The actions to attach to the picture: ``legal`` if given (e.g. ``()`` for a replay), else the legal actions
    when ``viewer`` is the seat to act or None (the whole table), else none. A bad ``viewer`` or an action that is
    not legal raises ValueError."""
    n = state.num_players
    if viewer is not None and (isinstance(viewer, bool) or not isinstance(viewer, Integral) or not 0 <= viewer < n):
        raise ValueError(f"viewer {viewer!r} is not allowed; expected None or a seat 0-{n - 1}")
    acting = not state.is_terminal() and viewer in (None, state.current_player)
    if legal is None:
        return frozenset(state.legal_actions()) if acting else frozenset()
    chosen = frozenset(legal)
    allowed = set(state.legal_actions()) if acting else set()
    if not chosen <= allowed:
        bad = sorted(chosen - allowed, key=str)[0]
        raise ValueError(f"action {bad!r} cannot be attached to the picture for viewer {viewer}: only legal actions "
                         "of the seat to act, seen by that seat or by the whole table")
    return chosen


def seat_order(viewer: int | None, n: int) -> list[int]:
    """The seats in the order a picture draws them: the viewer's first, then the others in table order, as the
    viewer's observation ranks them; table order for the whole table (``viewer=None``)."""
    return list(range(n)) if viewer is None else seats_from(viewer, n)


def among(actions: frozenset[int], *candidates: int) -> list[int]:
    """The ``candidates`` that are in ``actions`` (what :func:`clickable` gave): the actions of one spot."""
    return [a for a in candidates if a in actions]


Swatch = str | tuple[str, str] | None
"""A legend swatch: a fill colour, (fill, outline), or None for a text-only entry."""


class Svg:
    """An SVG document being drawn; ``str(svg)`` is the text. Coordinates are user units of the ``viewBox``, so
    the picture scales to any size. Keyword attributes are written with ``_`` as ``-`` (``font_size``) and a
    trailing ``_`` dropped (``class_``)."""

    def __init__(self, width: float, height: float, title: str, min_text: float = MIN_TEXT):
        self.width, self.height = width, height
        self.parts: list[str] = []
        self.title = title
        self.min_text = min_text  # a wide table (Palazzo) draws larger, as the web app shows it smaller

    # ------------------------------------------------------------- elements
    def tag(self, name: str, text: str | None = None, **attrs: Any) -> None:
        """One element: empty, or holding ``text`` (escaped)."""
        head = f"<{name}{_attrs(attrs)}"
        self.parts.append(f"{head}/>" if text is None else f"{head}>{escape(text)}</{name}>")

    def open(self, name: str, **attrs: Any) -> None:
        self.parts.append(f"<{name}{_attrs(attrs)}>")

    def close(self, name: str) -> None:
        self.parts.append(f"</{name}>")

    def rect(self, x: float, y: float, w: float, h: float, fill: str, stroke: str | None = None,
             **attrs: Any) -> None:
        if stroke is not None:
            attrs["stroke"] = stroke
        self.tag("rect", x=x, y=y, width=w, height=h, fill=fill, **attrs)

    def text(self, x: float, y: float, text: Any, size: float = 13, fill: str = INK, anchor: str = "start",
             bold: bool = False, **attrs: Any) -> None:
        """``text`` with its baseline at ``y``; ``anchor`` start, middle or end; never smaller than ``min_text``."""
        size = max(size, self.min_text)
        if anchor != "start":
            attrs["text_anchor"] = anchor
        if bold:
            attrs["font_weight"] = "bold"
        self.tag("text", str(text), x=x, y=y, font_size=size, fill=fill, **attrs)

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str, width: float = 1, **attrs: Any) -> None:
        self.tag("line", x1=x1, y1=y1, x2=x2, y2=y2, stroke=stroke, stroke_width=width, **attrs)

    @contextmanager
    def spot(self, box: tuple[float, float, float, float], title: str, actions: Iterable[int] = ()) -> Iterator[None]:
        """A named element (``<title>`` is its tooltip and accessible name); with ``actions`` (legal action ids)
        it is clickable: ``class="legal"``, ``data-actions`` the ids in ascending order, and a ring round ``box``
        (x, y, w, h) drawn over it."""
        ids = " ".join(map(str, sorted(actions)))
        if ids:
            self.open("g", class_="legal", data_actions=ids)
        else:
            self.open("g")
        self.tag("title", title)
        yield
        if ids:  # a white band between black lines, a gap from the element: it shows on every card and background
            x, y, w, h = box
            self.rect(x - 5, y - 5, w + 10, h + 10, "none", BLACK, stroke_width=8, rx=7)
            self.rect(x - 5, y - 5, w + 10, h + 10, "none", HIGHLIGHT, stroke_width=3.5, rx=7, class_="ring")
        self.close("g")

    def card(self, x: float, y: float, w: float, h: float, fill: str, label: str, title: str,
             actions: Iterable[int] = (), corner: str = "", size: float | None = None, dim: bool = False,
             label_y: float | None = None) -> None:
        """A card or tile: a rounded ``fill`` rectangle with ``label`` (bold) in the middle, or with its baseline at
        ``label_y`` below the top, and ``corner`` (a colour's letter) small at the top left; ``dim`` greys it."""
        with self.spot((x, y, w, h), title, actions):
            extra = {"opacity": 0.45} if dim else {}
            self.rect(x, y, w, h, fill, EDGE, rx=4, **extra)
            colour = ink(fill)
            size = size or min(h * 0.42, w * 0.5)
            if label:
                base = y + (h + 0.7 * size) / 2 if label_y is None else y + label_y
                self.text(x + w / 2, base, label, size, colour, "middle", True, **extra)
            if corner:
                self.text(x + 3, y + 11, corner, 10, colour, bold=True, **extra)

    def back(self, x: float, y: float, w: float, h: float, label: str, title: str,
             actions: Iterable[int] = ()) -> None:
        """A face-down card or pile, ``label`` (a count) on it."""
        with self.spot((x, y, w, h), title, actions):
            self.rect(x, y, w, h, CARD_BACK, EDGE, rx=4)
            self.rect(x + 4, y + 4, w - 8, h - 8, "none", "#8E7A99", rx=3)
            if label:
                size = min(h * 0.55, 1.5 * w / len(label), 18)
                self.text(x + w / 2, y + (h + 0.7 * size) / 2, label, size, INK, "middle", True)

    def outline(self, x: float, y: float, w: float, h: float, colour: str = MUTED, label: str = "",
                size: float = 11) -> None:
        """An empty place: a dashed outline, ``label`` in it."""
        self.rect(x, y, w, h, "none", colour, rx=4, stroke_dasharray="4 3")
        if label:
            self.text(x + w / 2, y + h / 2 + 0.35 * size, label, size, colour, "middle")

    def legend(self, x: float, y: float, width: float, items: Sequence[tuple[Swatch, str]], size: float = 12,
               heading: str = "Legend") -> float:
        """Legend entries (a swatch and what it means) flowing in rows within ``width``, under a heading;
        returns the height used (:func:`legend_height`)."""
        self.text(x, y + size, heading, size, MUTED, bold=True)
        for dx, dy, (swatch, text) in _flow(items, width, size):
            top = y + dy + size + 6
            if swatch is not None:
                fill, stroke = (swatch, EDGE) if isinstance(swatch, str) else swatch
                self.rect(x + dx, top, size, size, fill, stroke, rx=2, stroke_width=2 if stroke != EDGE else 1)
                dx += size + 5
            self.text(x + dx, top + size - 2, text, size, INK)
        return legend_height(items, width, size)

    def __str__(self) -> str:
        w, h = self.width, self.height
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_value(w)} {_value(h)}" width="{_value(w)}" '
                f'height="{_value(h)}" role="img" aria-label="{escape(self.title)}" font-family="{FONT}">'
                f"<title>{escape(self.title)}</title>"
                "<style>.legal{cursor:pointer}.legal:hover .ring{stroke-width:5.5}</style>"
                f'<rect width="100%" height="100%" fill="{TABLE}"/>')
        return head + "".join(self.parts) + "</svg>"


def _attrs(attrs: dict[str, Any]) -> str:
    return "".join(f' {k.rstrip("_").replace("_", "-")}="{_value(v)}"' for k, v in attrs.items())


def _flow(items: Sequence[tuple[Swatch, str]], width: float, size: float) -> list[tuple[float, float, Any]]:
    """Where each legend entry goes: rows filled left to right, a new row when the next entry does not fit."""
    out, dx, dy = [], 0.0, 0.0
    for swatch, text in items:
        w = (0 if swatch is None else size + 5) + text_width(text, size)
        if dx and dx + w > width:
            dx, dy = 0.0, dy + size + 8
        out.append((dx, dy, (swatch, text)))
        dx += w + 2 * size
    return out


def legend_height(items: Sequence[tuple[Swatch, str]], width: float, size: float = 12) -> float:
    """Height of :meth:`Svg.legend` for these entries in ``width``, heading included."""
    flow = _flow(items, width, size)
    return (flow[-1][1] if flow else 0) + 2 * size + 14

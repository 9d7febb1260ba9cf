import struct
import zlib

import numpy as np
import pytest

from tabletop_rl.envs.core.canvas import GLYPH_H, GLYPH_W, GLYPHS, UNKNOWN_GLYPH, Canvas, glyph, save_png

BG = (24, 96, 48)
RED = (255, 0, 0)
WHITE = (255, 255, 255)
FONT_CHARS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ .,:;-+/()[]=?!#*><|_%'"


def painted(canvas: Canvas, colour=None) -> np.ndarray:
    """Boolean (H, W) mask of pixels that differ from the background (or equal ``colour``)."""
    if colour is None:
        return np.any(canvas.pixels != BG, axis=2)
    return np.all(canvas.pixels == colour, axis=2)


def test_image_shape_dtype_and_background():
    c = Canvas(40, 30)
    img = c.image()
    assert img.shape == (30, 40, 3)
    assert img.dtype == np.uint8
    assert (img == BG).all()


def test_image_is_a_copy():
    c = Canvas(10, 10)
    img = c.image()
    img[:] = 0
    assert (c.pixels == BG).all()


def test_rect_fills_exactly_expected_pixels():
    c = Canvas(20, 10)
    c.rect(3, 2, 5, 4, RED)
    expected = np.zeros((10, 20), dtype=bool)
    expected[2:6, 3:8] = True
    assert (painted(c, RED) == expected).all()
    assert (painted(c) == expected).all()


def test_rect_border_lies_inside():
    c = Canvas(20, 20)
    c.rect(2, 2, 10, 8, RED, border=WHITE, border_width=2)
    outer = np.zeros((20, 20), dtype=bool)
    outer[2:10, 2:12] = True
    inner = np.zeros((20, 20), dtype=bool)
    inner[4:8, 4:10] = True
    assert (painted(c, RED) == inner).all()
    assert (painted(c, WHITE) == (outer & ~inner)).all()


def test_rect_outline_only_leaves_interior():
    c = Canvas(20, 20)
    c.rect(2, 2, 10, 8, None, border=WHITE)
    outer = np.zeros((20, 20), dtype=bool)
    outer[2:10, 2:12] = True
    inner = np.zeros((20, 20), dtype=bool)
    inner[3:9, 3:11] = True
    assert (painted(c, WHITE) == (outer & ~inner)).all()
    assert (c.pixels[inner] == BG).all()


@pytest.mark.parametrize(
    "x, y, w, h, region",
    [
        (-3, -2, 6, 5, (slice(0, 3), slice(0, 3))),  # top-left overhang
        (17, 8, 10, 10, (slice(8, 10), slice(17, 20))),  # bottom-right overhang
        (-5, 4, 100, 1, (slice(4, 5), slice(0, 20))),  # wider than the canvas
    ],
)
def test_rect_clips_at_edges(x, y, w, h, region):
    c = Canvas(20, 10)
    c.rect(x, y, w, h, RED, border=WHITE)
    expected = np.zeros((10, 20), dtype=bool)
    expected[region] = True
    assert (painted(c) == expected).all()


@pytest.mark.parametrize(
    "x, y, w, h",
    [(-50, 0, 10, 10), (0, -50, 10, 10), (20, 0, 5, 5), (0, 10, 5, 5), (5, 5, 0, 3), (5, 5, -4, 3)],
)
def test_rect_fully_off_canvas_or_empty_draws_nothing(x, y, w, h):
    c = Canvas(20, 10)
    c.rect(x, y, w, h, RED, border=WHITE)
    c.rect(x, y, w, h, None, border=WHITE)
    assert not painted(c).any()


def test_text_returns_text_width():
    c = Canvas(200, 40)
    for s, scale in [("", 1), ("A", 1), ("HELLO 42", 1), ("10", 3), ("x?", 2)]:
        assert c.text(2, 2, s, scale=scale) == Canvas.text_width(s, scale)
    assert Canvas.text_width("") == 0
    assert Canvas.text_width("A") == GLYPH_W
    assert Canvas.text_width("AB", 2) == (2 * GLYPH_W + 1) * 2


def test_text_eight_sets_pixels_and_space_none():
    c = Canvas(30, 30)
    c.text(1, 1, " ", colour=WHITE, scale=2)
    assert not painted(c).any()
    c.text(1, 1, "8", colour=WHITE, scale=2)
    mask = painted(c, WHITE)
    assert mask.sum() == GLYPHS["8"].sum() * 4
    # Everything lies inside the glyph's 10x14 cell at (1, 1).
    ys, xs = np.nonzero(mask)
    assert xs.min() >= 1 and xs.max() < 1 + 2 * GLYPH_W
    assert ys.min() >= 1 and ys.max() < 1 + 2 * GLYPH_H


def test_text_scaling_matches_glyph_bitmap():
    c = Canvas(20, 30, background=(0, 0, 0))
    c.text(0, 0, "R", colour=WHITE, scale=3)
    drawn = c.pixels[: 3 * GLYPH_H, : 3 * GLYPH_W, 0] == 255
    assert (drawn == np.kron(GLYPHS["R"], np.ones((3, 3), dtype=bool))).all()


def test_font_covers_required_characters():
    assert set(FONT_CHARS) <= set(GLYPHS)
    for ch in FONT_CHARS:
        assert GLYPHS[ch].shape == (GLYPH_H, GLYPH_W)
        if ch != " ":
            assert GLYPHS[ch].any(), ch
            assert not (GLYPHS[ch] == UNKNOWN_GLYPH).all(), ch


def test_lowercase_draws_as_uppercase():
    a, b = Canvas(80, 10), Canvas(80, 10)
    a.text(0, 0, "queen k")
    b.text(0, 0, "QUEEN K")
    assert (a.pixels == b.pixels).all()


def test_unknown_char_draws_box():
    c = Canvas(10, 10, background=(0, 0, 0))
    c.text(0, 0, "@", colour=WHITE)
    drawn = c.pixels[:GLYPH_H, :GLYPH_W, 0] == 255
    assert (drawn == UNKNOWN_GLYPH).all()
    assert c.pixels[GLYPH_H:].sum() == 0 and c.pixels[:, GLYPH_W:].sum() == 0
    # Characters whose upper-case form is several characters stay one glyph.
    assert glyph("ß") is UNKNOWN_GLYPH
    assert c.text(0, 0, "ß") == Canvas.text_width("ß")


def test_text_clips_partly_and_fully_off_canvas():
    c = Canvas(20, 10)
    c.text(-7, -3, "ABC", colour=WHITE, scale=2)
    assert painted(c).any()
    d = Canvas(20, 10)
    assert d.text(500, 500, "ABC") == Canvas.text_width("ABC")
    assert d.text(-500, 0, "ABC") == Canvas.text_width("ABC")
    assert not painted(d).any()


def test_text_rejects_bad_scale():
    with pytest.raises(ValueError):
        Canvas(10, 10).text(0, 0, "A", scale=0)


def test_card_border_corners_and_centred_label():
    c = Canvas(40, 60)
    x, y, w, h = 5, 5, 30, 44
    c.card(x, y, w, h, (240, 240, 240), "7", text_colour=RED, scale=2)
    # Corners untouched (the "rounded" look), edges get the dark border.
    for cx, cy in [(x, y), (x + w - 1, y), (x, y + h - 1), (x + w - 1, y + h - 1)]:
        assert tuple(c.pixels[cy, cx]) == BG
    assert tuple(c.pixels[y, x + 1]) == tuple(c.pixels[y + 1, x]) != BG
    assert tuple(c.pixels[y + 1, x + 1]) == (240, 240, 240)
    # Label bounding box is centred (to within the integer rounding).
    ys, xs = np.nonzero(painted(c, RED))
    tx, ty = x + (w - 2 * GLYPH_W) // 2, y + (h - 2 * GLYPH_H) // 2
    assert xs.min() >= tx and xs.max() < tx + 2 * GLYPH_W
    assert ys.min() >= ty and ys.max() < ty + 2 * GLYPH_H
    # Nothing outside the card.
    outside = np.ones((60, 40), dtype=bool)
    outside[y : y + h, x : x + w] = False
    assert (c.pixels[outside] == BG).all()


def test_card_shrinks_label_that_does_not_fit():
    c = Canvas(30, 30)
    # "10" at scale 3 is 33px wide; on a 20px card it must drop to scale 1.
    c.card(0, 0, 20, 28, WHITE, "10", text_colour=RED, scale=3)
    assert painted(c, RED).sum() == (GLYPHS["1"].sum() + GLYPHS["0"].sum())


def read_chunks(data: bytes):
    pos, chunks = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, kind
        chunks.append((kind, body))
        pos += 12 + length
    return chunks


def test_save_png_roundtrip(tmp_path):
    c = Canvas(37, 21)
    c.card(2, 2, 14, 18, RED, "Q")
    c.text(18, 5, "HI", scale=1)
    pixels = c.image()
    path = tmp_path / "out.png"
    save_png(pixels, path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks = read_chunks(data)
    kinds = [k for k, _ in chunks]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds
    width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (width, height, depth, colour_type, interlace) == (37, 21, 8, 2, 0)
    raw = zlib.decompress(b"".join(body for k, body in chunks if k == b"IDAT"))
    assert len(raw) == height * (1 + 3 * width)
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(height, 1 + 3 * width)
    assert (rows[:, 0] == 0).all()  # filter type None on every scanline
    assert (rows[:, 1:].reshape(height, width, 3) == pixels).all()


@pytest.mark.parametrize(
    "bad", [np.zeros((4, 4), np.uint8), np.zeros((4, 4, 4), np.uint8), np.zeros((4, 4, 3), np.float32)]
)
def test_save_png_rejects_bad_arrays(tmp_path, bad):
    with pytest.raises(ValueError):
        save_png(bad, tmp_path / "bad.png")


def test_legend_flows_entries_into_rows_and_paints_the_swatches():
    from tabletop_rl.envs.core.canvas import LEGEND_ROW, SWATCH, legend_height

    items = [((200, 10, 10), "RED"), (None, "A LONGER EXPLANATION"), ((10, 10, 200), "BLUE")]
    wide, narrow = Canvas(400, 60), Canvas(140, 60)
    assert wide.legend(2, 2, 396, items) == LEGEND_ROW == legend_height(items, 396)
    assert narrow.legend(2, 2, 136, items) == 3 * LEGEND_ROW  # one entry per row when they do not fit
    assert legend_height([], 100) == 0
    for canvas in (wide, narrow):
        assert painted(canvas, (200, 10, 10)).sum() == (SWATCH - 2) ** 2  # inside the swatch's border
        assert painted(canvas, (10, 10, 200)).any()
    assert not painted(narrow)[3 * LEGEND_ROW + 2:].any()  # nothing below the rows it reported

"""The SVG tables (``State.render_svg``: ``envs/<game>/svg.py`` drawn with ``envs/core/svg.py``): well-formed XML at
every position of random games of every game and player count, the legal moves clickable where they are (the
action ranges each module's docstring promises), no clickable move for a seat not to act, a seat's picture
showing nothing it cannot know (``sample_hidden`` leaves it unchanged, as ``tests/contract.py`` checks for the
observation and the text; the whole table's picture does change), bad viewers and actions refused in one line,
text escaped."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from tabletop_rl import envs
from tabletop_rl.envs.core import svg as s
from tabletop_rl.envs.five_towers import svg as five_towers_svg
from tabletop_rl.envs.five_towers.cards import TYPE_NAMES as FT_TYPES
from tabletop_rl.envs.lost_cities.cards import COLOUR_NAMES as LC_COLOURS
from tabletop_rl.envs.palazzo import svg as palazzo_svg
from tabletop_rl.envs.palazzo.actions import AUCTION, DEST, DEST_DISCARD, DEST_NEW, DONE, PASS, RECONSTRUCT, TILE
from tabletop_rl.envs.palazzo.game import tile_name
from tabletop_rl.envs.palazzo.payments import CARD, kind_name, unit_kinds
from tabletop_rl.envs.torres.board import square_name
from tabletop_rl.envs.torres.cards import CARD_NAMES as TORRES_CARDS

SVG = "{http://www.w3.org/2000/svg}"
CONFIGS = [
    ("lost_cities", {}), ("lost_cities", {"n_colours": 6, "rounds": 2}),
    *(("five_towers", {"num_players": n}) for n in (2, 3, 4, 5)),
    *(("palazzo", {"num_players": n}) for n in (2, 3, 4)),
    ("palazzo", {"removed_tiles_public": False, "num_players": 3}),
    *(("torres", {"num_players": n}) for n in (2, 3, 4)),
    ("torres", {"action_deck": "personal", "num_players": 3}), ("torres", {"action_deck": "master"}),
]


def spot_name(state, a: int) -> str | None:
    """What names the spot of legal action ``a`` (the element's ``<title>`` holds it), None if the game's svg module
    gives it no spot (see each module's docstring)."""
    name = state.game.name
    if name == "lost_cities":  # every action
        K = state.game.num_kinds
        return state.card_to_string(a % K) if a < 2 * K else "draw pile" if a == 2 * K else \
            f"{LC_COLOURS[a - 2 * K - 1]} discard pile"
    if name == "five_towers":  # not PASS, the bids, TEAR DOWN none
        return None if a < 7 else f"{FT_TYPES[a - 7]} tower" if a < 12 else f"display slot {(a - 12) % 5}"
    if name == "palazzo":  # not RECONSTRUCT, DONE, PASS; AUCTION when some quarry holds tiles
        if a in (RECONSTRUCT, DONE, PASS) or (a == AUCTION and not any(state.quarries)):
            return None
        if TILE <= a < CARD:
            return tile_name(a - TILE)
        if CARD <= a < DONE:  # a card, or a group of three: each of its cards
            return kind_name(unit_kinds(a)[0])
        return {0: "money deck", 1: "tile stacks", 3: "supply", 4: "quarry", DEST_NEW: "a new palace",
                DEST_DISCARD: "out of the game"}.get(a, f"palace {a - DEST}")
    if a >= 302:  # Torres: not SCORE_STEP, END_TURN, PASS
        return None
    if a < 256:
        return f"square {square_name(a % 64)}"
    if a < 261:
        return "turn's stack" if a == 260 else f"stack {a - 256}"
    return "deck" if a == 261 else TORRES_CARDS[(a - 262) % 10]


def clickable(svg_text: str) -> list[ET.Element]:
    """The elements holding actions, after checking the document is XML with an SVG root."""
    root = ET.fromstring(svg_text)
    assert root.tag == f"{SVG}svg" and root.get("viewBox")
    return [e for e in root.iter() if e.get("data-actions") is not None]


def attached(svg_text: str) -> dict[int, list[str]]:
    """Each clickable action and the names (``<title>``) of the elements holding it."""
    out: dict[int, list[str]] = {}
    for element in clickable(svg_text):
        assert element.get("class") == "legal", "an element with data-actions lacks class 'legal'"
        ids = element.get("data-actions").split(" ")
        assert ids and all(i.isdigit() for i in ids), element.get("data-actions")
        title = element.find(f"{SVG}title")
        assert title is not None and title.text, "a clickable element has no name (<title>)"
        for a in map(int, ids):
            out.setdefault(a, []).append(title.text)
    return out


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=lambda v: str(v))
def test_every_position_is_xml_with_the_legal_moves_clickable_where_they_are(name, options):
    """A whole random game: at every decision the seat to act's picture (and the whole table's) has every legal
    action the module promises a spot for in some ``data-actions``, and nothing else; every few decisions every
    seat's picture parses and only the seat to act's has clickable elements; at the end nobody's does."""
    game = envs.game_class(name)(**options)
    rng = np.random.default_rng(len(name) + game.num_players)
    state = game.new_initial_state(int(rng.integers(2**31)))
    checked = 0
    next_full = 0
    while True:
        acting = state.current_player
        if state.is_terminal() or next_full == 0:
            next_full = int(rng.integers(1, 16))
            for viewer in (None, *range(game.num_players)):
                picture = state.render_svg(viewer)
                ids = attached(picture)
                if viewer is not None and viewer != acting:
                    assert not ids, f"player {viewer} is not to act, yet {sorted(ids)} are clickable"
                else:
                    assert ids.keys() <= set(state.legal_actions())
                if viewer is not None:  # the leak check: redrawing what the viewer cannot see changes nothing
                    assert state.sample_hidden(viewer, rng).render_svg(viewer) == picture, \
                        f"information leak: render_svg({viewer}) shows something player {viewer} cannot know"
            assert not attached(state.render_svg(legal=())), "legal=() still attached actions"
        if state.is_terminal():
            break
        legal = state.legal_actions()
        spots = attached(state.render_svg(acting))
        for a in legal:
            where = spot_name(state, a)
            assert where is None or any(where in title for title in spots.get(a, [])), \
                f"{state.phase}: legal action {a} ({state.describe_action(a)}) is not on an element named " \
                f"'...{where}...', but on {spots.get(a)}"
        assert spots.keys() <= set(legal), f"{sorted(spots.keys() - set(legal))} are clickable but not legal"
        checked += len(spots)
        next_full -= 1
        state.apply_action(legal[int(rng.integers(len(legal)))])
    assert checked > 100


@pytest.mark.parametrize("name", ["lost_cities", "five_towers", "palazzo", "torres"])
def test_the_whole_table_shows_what_a_seat_cannot_see(name):
    """The leak check (a seat's picture unchanged when ``sample_hidden`` redraws what it cannot see) is not
    vacuous: the whole table's picture does change (hands, the next cards), so the hidden things are drawn and only
    the seat's view leaves them out."""
    game = envs.game_class(name)(num_players=3) if name != "lost_cities" else envs.game_class(name)()
    rng = np.random.default_rng(0)
    state = game.new_initial_state(1)
    changed = 0
    for _ in range(12):
        for p in range(game.num_players):
            sample = state.sample_hidden(p, rng)
            assert sample.render_svg(p) == state.render_svg(p)
            changed += sample.render_svg() != state.render_svg()
        for _ in range(int(rng.integers(1, 12))):
            if not state.is_terminal():
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.integers(len(legal)))])
    assert changed > 3


def test_bad_viewers_and_actions_are_refused_in_one_line():
    state = envs.game_class("lost_cities")().new_initial_state(0)
    before = state.to_json()
    for viewer in (2, -1, "0", True, 1.0):
        with pytest.raises(ValueError, match=r"^viewer .* is not allowed; expected None or a seat 0-1$"):
            state.render_svg(viewer)
    other = 1 - state.current_player
    with pytest.raises(ValueError, match=r"^action 999 cannot be attached to the picture for viewer None: only "
                                         r"legal actions of the seat to act, seen by that seat or by the whole table$"):
        state.render_svg(legal=[999])
    with pytest.raises(ValueError, match=f"^action {state.legal_actions()[0]} cannot be attached .* viewer {other}:"):
        state.render_svg(other, legal=state.legal_actions()[:1])
    assert state.to_json() == before
    some = state.legal_actions()[:2]
    assert attached(state.render_svg(legal=some)).keys() == set(some)


def test_text_and_attributes_are_escaped():
    """Whatever reaches the picture (a name typed by a user, say) is text, never markup."""
    evil = 'Ann <b>&amp;"\'</b>\x00\x1b]'
    out = s.Svg(100, 50, evil)
    out.text(10, 20, evil)
    with out.spot((0, 0, 10, 10), evil, [3, 1]):
        out.rect(0, 0, 10, 10, s.BLUE, data_note=evil)
    root = ET.fromstring(str(out))
    shown = evil.replace("\x00", "\ufffd").replace("\x1b", "\ufffd")
    assert root.get("aria-label") == shown and root.find(f"{SVG}title").text == shown
    assert root.find(f"{SVG}text").text == shown
    group = root.find(f"{SVG}g")
    assert group.get("data-actions") == "1 3" and group.get("class") == "legal"
    assert group.find(f"{SVG}title").text == shown and group.find(f"{SVG}rect").get("data-note") == shown
    assert s.escape("<&>\"'") == "&lt;&amp;&gt;&quot;&#x27;"


def test_ink_reads_on_its_fill_counts_agree_and_the_legend_reserves_its_height():
    assert s.ink(s.YELLOW) == "#000000" and s.ink(s.BLUE) == "#FFFFFF"
    assert (s.count(1, "card"), s.count(0, "tile"), s.count(2, "block")) == ("1 card", "0 tiles", "2 blocks")
    items = [(s.BLUE, "a fairly long legend entry")] * 12
    out = s.Svg(400, 400, "legend")
    assert out.legend(0, 0, 400, items) == s.legend_height(items, 400) > 5 * 20  # it wraps to several rows


def test_long_rows_stay_inside_their_boxes():
    """A long rubble row overlaps its cards inside the Five Towers seat panel; Palazzo's tiles out of the game
    take two lines of at most six names, then "…" (both ran out of their boxes before)."""
    env = envs.make("five_towers", wrapped=False)
    env.reset(seed=0)
    state = env.game_state
    state.rubble[0].extend(range(20))  # more cards than fit side by side
    picture = state.render_svg(None)
    xs = [float(x) for x in re.findall(r'<title>rubble: [^<]*</title><rect x="([\d.]+)"', picture)]
    assert len(xs) == 20 and len(set(xs)) == 20
    right = five_towers_svg.MARGIN + five_towers_svg.PANEL_W  # seat 0's panel is the first
    assert max(xs) + five_towers_svg.RW <= right - five_towers_svg.GAP
    env = envs.make("palazzo", wrapped=False)
    env.reset(seed=0)
    state = env.game_state
    state.removed.extend(t for t in range(30) if t not in state.removed)
    lines = [line for line in re.findall(r'<text [^>]*font-size="12"[^>]*>([^<]*)</text>', state.render_svg(None))
             if re.fullmatch(r"([bsm]\d\.\d ?)+( …)?", line)]
    assert len(lines) == 2 and all(len(line.split()) <= palazzo_svg.REMOVED_PER_LINE + 1 for line in lines)
    assert lines[1].endswith(" …")

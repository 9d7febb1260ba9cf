"""Milliseconds per SVG picture of the table (``State.render_svg``), per game, over random positions; with --rgb,
per ``rgb_array`` frame (``State.render_rgb``: the SVG rasterised by resvg, the ``render`` extra).

    python benchmarks/svg_speed.py [--positions 300] [--seed 0] [--games lost_cities torres] [--rgb]

Positions are taken every few decisions of uniformly random games with each game's largest player count (the
largest tables); each is drawn for the whole table (``viewer=None``, every legal move clickable) and for the seat
to act. Times are CPU time of this process. Target (issue 26): at most 20 ms for any SVG; none for the frames
(docs/engine_contract.md#pictures gives them).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from tabletop_rl import envs

LARGEST = {"five_towers": {"num_players": 5}, "palazzo": {"num_players": 4}, "torres": {"num_players": 4},
           "lost_cities": {"n_colours": 6}}
TARGET_MS = 20.0


def positions(game, count: int, rng: np.random.Generator) -> list:
    """``count`` positions, every 1 to 10 decisions of random games, terminal ones included."""
    out, state = [], game.new_initial_state(int(rng.integers(2**63)))
    while len(out) < count:
        out.append(state.clone())
        for _ in range(int(rng.integers(1, 11))):
            if state.is_terminal():
                state = game.new_initial_state(int(rng.integers(2**63)))
                break
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--positions", type=int, default=300, help="positions per game")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--games", nargs="+", default=sorted(LARGEST), choices=sorted(LARGEST))
    parser.add_argument("--rgb", action="store_true", help="time the rgb_array frames instead of the SVG")
    args = parser.parse_args()
    if args.positions < 1:
        parser.error(f"--positions {args.positions} is not allowed; expected a positive number")
    rng = np.random.default_rng(args.seed)
    target = "" if args.rgb else f"  target ≤ {TARGET_MS:g} ms"
    print(f"{'game':<12} {'options':<28} {'pictures':>8} {'mean ms':>8} {'max ms':>8}{target}")
    for name in args.games:
        game = envs.game_class(name)(**LARGEST[name])
        first = game.new_initial_state(0)
        draw = first.render_rgb if args.rgb else first.render_svg
        draw()  # imports the game's svg module (and the rasteriser, sizing the frames), once per process
        times = []
        for state in positions(game, args.positions, rng):
            draw = state.render_rgb if args.rgb else state.render_svg
            for viewer in (None, max(state.current_player, 0)):
                start = time.process_time()
                draw(viewer)
                times.append(1000 * (time.process_time() - start))
        worst = max(times)
        verdict = "" if args.rgb else f"  {'ok' if worst <= TARGET_MS else 'SLOW'}"
        print(f"{name:<12} {str(LARGEST[name]):<28} {len(times):>8} {statistics.fmean(times):>8.2f} "
              f"{worst:>8.2f}{verdict}")


if __name__ == "__main__":
    main()

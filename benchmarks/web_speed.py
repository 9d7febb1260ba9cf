"""Server time of the web app (issue 26): a person's move answered (the move checked and applied, the view with its
SVG and moves in words built) and the SVG of a position alone, per game, in ms (median and worst over a random game).
Agents' thinking is apart: it is what /step spends, and the page shows it as thinking.

    python benchmarks/web_speed.py [--games N]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from tabletop_rl import game_class, list_games
from tabletop_rl.training.webapp.server import App

OPTIONS = {"lost_cities": {}, "five_towers": {}, "palazzo": {}, "torres": {}}  # each game's defaults


def measure(name: str, games: int) -> tuple[list[float], list[float]]:
    move, svg = [], []
    with tempfile.TemporaryDirectory() as records:
        app = App(records)
        for seed in range(games):
            players = game_class(name)(**OPTIONS[name]).num_players  # every seat a person: no agent time
            live = app.new_game({"game": name, "options": OPTIONS[name], "seats": ["human"] * players, "seed": seed})
            while not live.state.is_terminal():
                state = live.state
                action = state.legal_actions()[len(state.legal_actions()) // 2]
                start = time.perf_counter()
                state.render_svg(state.current_player)
                svg.append(time.perf_counter() - start)
                start = time.perf_counter()
                app.move(live, {"action": action})
                app.play_view(live)
                move.append(time.perf_counter() - start)
    return move, svg


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2)
    args = parser.parse_args()
    print(f"{'game':<12} {'move median':>12} {'move max':>9} {'svg median':>11} {'svg max':>8}  (ms)")
    for name in list_games():
        move, svg = measure(name, args.games)
        ms = [1000 * f(x) for x in (move, svg) for f in (statistics.median, max)]
        print(f"{name:<12} {ms[0]:>12.1f} {ms[1]:>9.1f} {ms[2]:>11.1f} {ms[3]:>8.1f}")


if __name__ == "__main__":
    main()

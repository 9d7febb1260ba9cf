"""The heuristic bots' choices on a recorded corpus of positions, so that a faster bot can be shown to choose as
the old one did.

    python tests/heuristic_choices.py --write      # record (only when a bot's play is meant to change)

For each game and option set of ``benchmarks/behaviour_digest.py``: ``GAMES`` seeded games in which every seat has
a ``HeuristicAgent`` of its own (seeded by its seat) that is asked for its choice at every decision of its seat;
the move played is that choice at the heuristic seats of the game and a seeded random legal action at the others
(which seats are which is drawn per game), so the corpus holds positions of heuristic play and of odd play alike.
The choices are stored per game in ``tests/golden/heuristic_choices/<game>.json``; ``replay`` plays the same
games with today's bots and yields every decision, the recorded choice beside today's.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "benchmarks"))
from behaviour_digest import CONFIGS  # noqa: E402

import tabletop_rl  # noqa: E402
from tabletop_rl.envs.core.agents import builtin_agent  # noqa: E402

GAMES = 12
FOLDER = ROOT / "golden" / "heuristic_choices"


def play(game, seed: int, recorded: list[int] | None = None) -> Iterator[tuple[int, int, int | None]]:
    """Game ``seed`` of the corpus: (decision index, today's choice, recorded choice or None) at every decision.
    With ``recorded``, the moves played follow the recorded choices, so one differing choice does not change the
    positions after it."""
    rng = np.random.default_rng([seed, 4242])
    heuristic_seats = rng.random(game.num_players) < 0.5
    agents = [builtin_agent("heuristic", game, seed=seed * 10 + p) for p in range(game.num_players)]
    state = game.new_initial_state(seed)
    i = 0
    while not state.is_terminal():
        p = state.current_player
        mask = state.action_mask()
        choice = int(agents[p].act(state.observation(p), mask))
        old = None if recorded is None else recorded[i]
        legal = state.legal_actions()
        move = (choice if old is None else old) if heuristic_seats[p] else legal[int(rng.integers(len(legal)))]
        yield i, choice, old
        state.apply_action(move)
        i += 1


def record(name: str) -> dict:
    out = []
    for options in CONFIGS[name]:
        game = tabletop_rl.game_class(name)(**options)
        out.append({"options": options, "games": [[choice for _, choice, _ in play(game, seed)]
                                                   for seed in range(GAMES)]})
    return out


def load(name: str) -> list[dict]:
    return json.loads((FOLDER / f"{name}.json").read_text())


def replay(name: str) -> Iterator[tuple[dict, int, int, int, int]]:
    """(options, game seed, decision, recorded choice, today's choice) for every decision of the corpus."""
    for entry in load(name):
        game = tabletop_rl.game_class(name)(**entry["options"])
        for seed, choices in enumerate(entry["games"]):
            for i, choice, old in play(game, seed, choices):
                yield entry["options"], seed, i, old, choice


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="record the corpus anew from today's bots")
    parser.add_argument("--games", nargs="*", default=list(CONFIGS))
    args = parser.parse_args()
    if not args.write:
        parser.error("nothing to do: --write records the corpus (tests/test_heuristic_choices.py checks it)")
    FOLDER.mkdir(parents=True, exist_ok=True)
    for name in args.games:
        data = record(name)
        (FOLDER / f"{name}.json").write_text(json.dumps(data, separators=(",", ":")) + "\n")
        print(name, sum(len(g) for e in data for g in e["games"]), "decisions")


if __name__ == "__main__":
    main()

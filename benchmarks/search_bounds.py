"""What better beliefs could give the search, and what perfect information gives: `search` with samplers that cheat.

    python benchmarks/search_bounds.py hand lost_cities search heuristic --games 100 --seed 1
    python benchmarks/search_bounds.py full lost_cities search:worlds=1 heuristic --games 100 --seed 1
    python benchmarks/search_bounds.py full five_towers \
        search:worlds=16,k=22,min_prior=0,c=0,opponents=random,value=returns random \
        --players 5 --one-vs-rest --games 400 --seed 1

A measurement, never a player: the search agent's sampled worlds (`SeatView.sample`, normally
`State.sample_hidden`: the opponent's hand and the deck order drawn again from what the seat has seen) are
replaced, in this process only, by copies of the true position:

  hand  (Lost Cities) the opponent's true hand; only the deck order is shuffled again — the most that
        inferring the opponent's hand from its past moves (weighting worlds by them) could give
  full  (any game) the true position, deck order included (with arg-max play-outs and deterministic
        opponents every world is the same, so `worlds=1` gives the same moves for 1/32 of the time) —
        perfect information: what a player who sees every card can win

The state's generator (Lost Cities' later rounds, Five Towers' reshuffle of the discard pile) is always drawn
afresh: nobody can know what has not been shuffled yet. Everything after the game name is passed to
`python -m tabletop_rl.training.evaluate GAME …` (one process: the patch does not reach spawned workers, so
`--workers` is not allowed); compare its games.csv deal by deal with the honest search on the same seeds.
Results: docs/search.md, "What better beliefs could give"; docs/five_towers.md, "What can be won at 5 players".
"""

from __future__ import annotations

import sys

import numpy as np

from tabletop_rl import envs
from tabletop_rl.envs.core.agents import SeatView
from tabletop_rl.training import evaluate

MODES = ("hand", "full")


def cheating_sample(mode: str):
    def sample(view: SeatView, rng: np.random.Generator):
        state = view._live().clone()
        if mode == "hand":
            state.deck = [state.deck[i] for i in rng.permutation(len(state.deck))]
        state.rng = np.random.default_rng(int(rng.integers(2**63)))
        return state  # the engine's derived tables and legal moves do not depend on the deck's order
    return sample


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[0] not in MODES or argv[1] not in envs.list_games():
        sys.exit(f"usage: python benchmarks/search_bounds.py {{{'|'.join(MODES)}}} GAME AGENT... [evaluate options]; "
                 f"GAME is one of {', '.join(envs.list_games())}")
    if argv[0] == "hand" and argv[1] != "lost_cities":
        sys.exit("search_bounds.py: 'hand' is Lost Cities' (the opponent's hand); other games take 'full'")
    if "--workers" in argv:
        sys.exit("search_bounds.py runs in one process (--workers is not allowed): the cheating sampler is "
                 "patched into this process only")
    SeatView.sample = cheating_sample(argv[0])
    evaluate.main([*argv[1:], "--workers", "1"])


if __name__ == "__main__":
    main(sys.argv[1:])

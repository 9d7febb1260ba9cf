"""Regenerate the README's pictures, docs/img/<game>.png: one frame of a mid-game position of each game, taken the
way a user takes one, from the PettingZoo env's ``render_mode="rgb_array"`` (the whole table; needs the ``render``
extra).

    python docs/update_frames.py

Heuristic bots play a seeded game halfway (the same picture every time); the frame is saved as an
indexed PNG (256 colours, the table's few colours and the text's antialiasing), each well under 150 KB.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # this checkout's tabletop_rl, not an installed copy (the script is in docs/)

from PIL import Image  # noqa: E402

import tabletop_rl  # noqa: E402
from tabletop_rl.envs.core.agents import builtin_agent  # noqa: E402

# game: (options, seed); the frame shows the position halfway through that game
FRAMES = {"lost_cities": ({}, 3), "five_towers": ({"num_players": 3}, 3), "palazzo": ({"num_players": 3}, 3),
          "torres": ({"num_players": 3}, 3)}


def frame(name: str, options: dict, seed: int) -> Image.Image:
    """The frame halfway through a seeded game of heuristic bots (played once to count its decisions)."""
    env = tabletop_rl.make(name, render_mode="rgb_array", **options)
    length = play(env, seed, None)
    play(env, seed, length // 2)
    return Image.fromarray(env.render())


def play(env, seed: int, decisions: int | None) -> int:
    """Reset ``env`` with ``seed`` and let heuristic bots make ``decisions`` decisions (None: to the end)."""
    env.reset(seed=seed)
    game = env.unwrapped.game
    bots = [builtin_agent("heuristic", game, seed + p) for p in range(game.num_players)]
    made = 0
    while made != decisions and not env.unwrapped.game_state.is_terminal():
        observation, *_ = env.last()
        seat = env.unwrapped.game_state.current_player
        env.step(bots[seat].act(observation["observation"], observation["action_mask"]))
        made += 1
    return made


def main() -> None:
    for name, (options, seed) in FRAMES.items():
        path = DOCS / "img" / f"{name}.png"
        frame(name, options, seed).quantize(256).save(path, optimize=True)
        print(f"{path.relative_to(DOCS.parent)}: {path.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()

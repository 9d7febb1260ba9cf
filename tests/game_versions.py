"""Each game's version pinned to a fingerprint of what an agent sees and gets in it (docs/versions.md), so that a
change of that cannot land without raising the version.

    python tests/game_versions.py --pin     # after raising a game's version: record its new fingerprint

A game's fingerprint is one SHA-256 over its option defaults and, for the defaults and each option value that is
valid on its own (every player count and rule variant, an integer's least value and the one above its default: the
turn caps' truncation too), its spaces (players, observation and state sizes and
bounds, actions, the longest game) and seeded games: ``GAMES`` of random legal actions on the engine (every seat's
observation, the mask and the global state at every decision, the returns, scores and truncation at the end:
``benchmarks/behaviour_digest.py``'s trajectory digest) and, through the Gymnasium id, ``GAMES`` episodes of one
seat against random and against heuristic opponents (the observations, masks, rewards, ends and seats) and the
reward and end of an illegal action. Not the shipped policies (``opponent="pretrained"``): they change when they
are retrained or converted, and are cited by the package's version. ``tests/golden/game_versions.json`` holds
the fingerprint of every version of every game; ``tests/test_game_versions.py`` checks today's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import gymnasium
import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "benchmarks"))
from behaviour_digest import trajectory_digest  # noqa: E402

import tabletop_rl  # noqa: E402

GAMES = 2  # seeded games per option set and way of playing
PINNED = ROOT / "golden" / "game_versions.json"
COMMAND = "python tests/game_versions.py --pin"


def values(option) -> list:
    """An option's listed values, or a boolean's two; an integer's least value and the one above its default."""
    listed = option.values or ((False, True) if option.check(False) else ())
    if option.bounds is not None:
        listed += (option.bounds[0], option.default + 1) if type(option.default) is int else (option.bounds[0],)
    return [value for _, value in dict.fromkeys((type(v), v) for v in listed)]  # True is not 1


def variants(name: str) -> list[dict]:
    """The default options, then each option's other values one at a time (those valid on their own)."""
    game_class = tabletop_rl.game_class(name)
    out = [{}]
    for option in game_class.option_schema:
        for value in values(option):
            if not (value == option.default and type(value) is type(option.default)) and option.check(value):
                try:
                    game_class(**{option.name: value})
                except ValueError:  # valid only with other options (a seat beyond the default player count)
                    continue
                out.append({option.name: value})
    return out


def spaces(game) -> bytes:
    low, high = game.layout.bounds()
    state_low, state_high = game.state_layout.bounds()
    sizes = [game.num_players, game.observation_size, game.num_actions, game.state_layout.size, game.max_game_length]
    return json.dumps(sizes).encode() + b"".join(np.asarray(a, np.float32).tobytes()
                                                  for a in (low, high, state_low, state_high))


def seat_digest(name: str, options: dict, opponent: str) -> bytes:
    """``GAMES`` seeded episodes of one seat through the Gymnasium id, random legal actions, then an illegal one."""
    digest = hashlib.sha256()
    env = gymnasium.make(tabletop_rl.env_id(name), opponent=opponent, **options)
    for seed in range(GAMES):
        rng = np.random.default_rng(seed)
        observation, info = env.reset(seed=seed)
        digest.update(bytes([info["seat"]]))
        done = False
        while not done:
            digest.update(observation.tobytes() + info["action_mask"].tobytes())
            legal = np.flatnonzero(info["action_mask"])
            observation, reward, terminated, truncated, info = env.step(int(legal[rng.integers(len(legal))]))
            digest.update(np.float64(reward).tobytes() + bytes([terminated, truncated]))
            done = terminated or truncated
        digest.update(observation.tobytes())
    _, info = env.reset(seed=GAMES)
    _, reward, terminated, truncated, _ = env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    digest.update(np.float64(reward).tobytes() + bytes([terminated, truncated]))
    return digest.digest()


def fingerprint(name: str) -> str:
    """The SHA-256 of what an agent sees and gets in game ``name`` (the module docstring)."""
    game_class = tabletop_rl.game_class(name)
    digest = hashlib.sha256(json.dumps(game_class().options, sort_keys=True).encode())
    for options in variants(name):
        game = game_class(**options)
        digest.update(json.dumps(options, sort_keys=True).encode() + spaces(game))
        digest.update(trajectory_digest(game, GAMES)[0].encode())
        for opponent in ("random", "heuristic"):
            digest.update(seat_digest(name, options, opponent))
    return digest.hexdigest()


def pinned() -> dict[str, dict[str, str]]:
    """``{game: {version: fingerprint}}``: every version's fingerprint, as recorded when it was made."""
    return json.loads(PINNED.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pin", action="store_true", help="record the fingerprint of each game's version if it has "
                                                           "none yet")
    args = parser.parse_args()
    if not args.pin:
        parser.error("nothing to do: --pin records new versions' fingerprints (tests/test_game_versions.py checks)")
    table = pinned() if PINNED.exists() else {}
    status = 0
    for name in tabletop_rl.list_games():
        version, now = str(tabletop_rl.game_version(name)), fingerprint(name)
        before = table.setdefault(name, {}).get(version)
        if before is None:
            table[name][version] = now
            print(f"{tabletop_rl.env_id(name)}: pinned to {now}")
        elif before == now:
            print(f"{tabletop_rl.env_id(name)}: unchanged")
        else:
            print(f"{tabletop_rl.env_id(name)} is pinned to another fingerprint: its behaviour changed, raise its "
                  "version (docs/versions.md)", file=sys.stderr)
            status = 1
    PINNED.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())

"""A fingerprint of what the engines and the shipped policies do, to prove that a refactoring changed nothing.

    python benchmarks/behaviour_digest.py --out /tmp/before                  # record (from this checkout)
    python benchmarks/behaviour_digest.py --repo /tmp/old --out /tmp/before  # record another checkout's code
    python benchmarks/behaviour_digest.py --against /tmp/before              # record again and compare
    python benchmarks/behaviour_digest.py --against /tmp/before --tolerance 5e-3  # policies changed on purpose

For each game, player count and a few option sets: --games seeded games of uniformly random legal actions,
hashed (SHA-256) over every seat's observation and the mask at every decision, the global state, and the
returns and scores at the end — equal hashes mean identical bits. For each shipped policy: its action
probabilities on --positions positions of seeded random games (stored, so the comparison reports the largest
difference and how many positions' likeliest legal action changed; the bar is --tolerance, 1e-6 unless a change
of the policies themselves is being measured, as when they were rounded to float16: docs/training.md, "Policy
files"). Exit status 1 when anything differs: any hash, or a probability by more than the tolerance.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import sys
from pathlib import Path

import numpy as np

CONFIGS = {  # (game, options): every player count with default options, and the golden playthroughs' option sets
    "lost_cities": [{}, {"n_colours": 6, "rounds": 2}],
    "five_towers": [{"num_players": n} for n in (2, 3, 4, 5)] + [
        {"num_players": 3, "canonical_order": False, "auto_resolve_forced": True, "zero_starts_tower": False,
         "rebuild_removed_tower": False, "first_player": 1}],
    "palazzo": [{"num_players": n} for n in (2, 3, 4)] + [
        {"num_players": 3, "canonical_order": False, "auto_resolve_forced": True, "stack_split": "by_floor_shuffled",
         "removed_tiles_public": False, "reshuffle_timing": "on_empty", "first_player": 1}],
    "torres": [{"num_players": n} for n in (2, 3, 4)] + [
        {"num_players": 3, "action_deck": "personal", "auto_resolve_forced": True, "door_model": "monotone_tunnel",
         "forced_redistribution": False},
        {"num_players": 4, "action_deck": "master", "phase_start": "king_mover"}],
}


def trajectory_digest(game, games: int) -> tuple[str, int]:
    """SHA-256 over ``games`` seeded random games of ``game``, and the number of decisions played."""
    digest, decisions = hashlib.sha256(), 0
    for seed in range(games):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state(seed)
        while not state.is_terminal():
            for seat in range(game.num_players):
                digest.update(state.observation(seat).tobytes())
            digest.update(state.action_mask().tobytes())
            digest.update(state.global_state().tobytes())
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
            decisions += 1
        digest.update(np.asarray(state.returns(), np.float64).tobytes())
        digest.update(json.dumps([float(s) for s in state.scores()]).encode())
    return digest.hexdigest(), decisions


def positions(game, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the acting seat at ``count`` decisions of seeded random games (one in four)."""
    observations, masks, seed = [], [], 0
    while len(observations) < count:
        rng, state = np.random.default_rng(10_000 + seed), game.new_initial_state(10_000 + seed)
        seed += 1
        while not state.is_terminal() and len(observations) < count:
            if rng.random() < 0.25:
                observations.append(state.observation(state.current_player))
                masks.append(state.action_mask())
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
    return np.stack(observations), np.stack(masks)


def probabilities(policy, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    logits = np.asarray(policy.logits(observations), np.float64)
    logits = np.where(masks > 0, logits, -np.inf)
    logits -= logits.max(axis=1, keepdims=True)
    exp = np.exp(logits)
    return exp / exp.sum(axis=1, keepdims=True)


def shipped_policies(tabletop_rl) -> list[Path]:
    root = Path(tabletop_rl.training.__file__).parent
    return sorted(root.rglob("pretrained/*.safetensors"))


def load_policy(path: Path):
    for module in ("tabletop_rl.training.runtime.policy", "tabletop_rl.training.policy"):
        try:
            return importlib.import_module(module).load_policy(path)
        except ModuleNotFoundError:
            continue
    raise SystemExit("cannot find load_policy in this checkout")


def record(games: int, count: int, stored: dict | None) -> tuple[dict, dict[str, np.ndarray]]:
    import tabletop_rl

    digest, arrays = {}, {}
    for name, option_sets in CONFIGS.items():
        game_class = tabletop_rl.game_class(name)
        for options in option_sets:
            key = f"{name} {json.dumps(options, sort_keys=True)}"
            digest[key] = list(trajectory_digest(game_class(**options), games))
            print(f"{key}: {digest[key][1]:,} decisions {digest[key][0][:16]}…", flush=True)
    for path in shipped_policies(tabletop_rl):
        policy = load_policy(path)
        game = tabletop_rl.game_class(policy.info.game)(**policy.info.options)
        name = f"{game.name}_{game.num_players}p"  # not the file's name, which changed
        if stored is not None and f"{name}/observations" in stored:  # the positions recorded before
            observations, masks = stored[f"{name}/observations"], stored[f"{name}/masks"]
        else:
            observations, masks = positions(game, count)
        arrays[f"{name}/observations"], arrays[f"{name}/masks"] = observations, masks
        arrays[f"{name}/probabilities"] = probabilities(policy, observations, masks)
        print(f"{name} policy: {len(observations)} positions", flush=True)
    return digest, arrays


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, help="the checkout whose code to fingerprint (default: this one)")
    parser.add_argument("--out", type=Path, help="folder to write digest.json and policies.npz to (must not exist)")
    parser.add_argument("--against", type=Path, help="a folder written by --out: compare with it")
    parser.add_argument("--games", type=int, default=200, help="random games per option set (default 200)")
    parser.add_argument("--positions", type=int, default=2000, help="positions per shipped policy (default 2000)")
    parser.add_argument("--tolerance", type=float, default=1e-6,
                        help="largest difference of an action probability that passes (default 1e-6)")
    args = parser.parse_args()
    if (args.out is None) == (args.against is None):
        parser.error("give exactly one of --out and --against")
    if args.out is not None and args.out.exists():
        parser.error(f"--out {args.out} exists; name a new folder")
    sys.path.insert(0, str((args.repo or Path(__file__).resolve().parent.parent).resolve()))

    stored = None
    if args.against is not None:
        before = json.loads((args.against / "digest.json").read_text())
        stored = dict(np.load(args.against / "policies.npz"))
    digest, arrays = record(args.games, args.positions, stored)
    if args.out is not None:
        args.out.mkdir(parents=True)
        (args.out / "digest.json").write_text(json.dumps(digest, indent=1))
        np.savez_compressed(args.out / "policies.npz", **arrays)
        print(f"written to {args.out}")
        return 0

    differences = [key for key in before if before[key] != digest.get(key)]
    for key in differences:
        print(f"DIFFERS: {key}: {before[key]} -> {digest.get(key)}")
    for name in sorted({k.split("/")[0] for k in stored}):
        old, new = stored[f"{name}/probabilities"], arrays[f"{name}/probabilities"]
        gap = float(np.max(np.abs(old - new)))
        exact = np.array_equal(old, new)
        changed = int((old.argmax(axis=1) != new.argmax(axis=1)).sum())
        print(f"{name} policy: largest probability difference {gap:.2e}{' (bit for bit)' if exact else ''}, "
              f"likeliest action changed at {changed} of {len(old)} positions")
        if gap > args.tolerance:
            differences.append(name)
    same = "identical" if args.tolerance == parser.get_default("tolerance") else \
        f"identical hashes, probabilities within {args.tolerance:g}"
    print(same if not differences else f"{len(differences)} difference(s)")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())

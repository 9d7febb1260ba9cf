"""Expert iteration: record the search agent's moves and the games' outcomes, fit its network to them; in
generations, each candidate gated against the last accepted policy (or against the opponent beside it).

    python -m tabletop_rl.training.expert_iteration lost_cities --games 1000 --workers 2
    python -m tabletop_rl.training.expert_iteration lost_cities --generations 3 --games 300 --gate-deals 500
    python -m tabletop_rl.training.expert_iteration lost_cities --generations 12 --games 2000 --fresh --window 12 \
        --gate opponent --epochs 15 --learning-rate 1e-3 --workers 2          # gnabcel/lost-cities-ai's recipe
    python -m tabletop_rl.training.expert_iteration --resume runs/expert_iteration/lost_cities --games 1400
    python -m tabletop_rl.training.evaluate lost_cities runs/expert_iteration/lost_cities heuristic --games 2000

The command line over :mod:`tabletop_rl.training.ppo.distil` (docs/search.md, "Expert iteration").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

from .. import envs
from ..envs.core.files import atomic_write, new_folder
from . import cli
from .cli.stopping import stoppable
from .ppo.distil import GATE_RULES, GATES, Settings, keep_previous, run, saved_so_far
from .runtime.agents import load_agent
from .runtime.policy_paths import policy_path


def main(argv: Sequence[str] | None = None) -> Path:
    defaults = Settings("", {}, "", "", "", 1000)
    parser = cli.ArgumentParser(prog="python -m tabletop_rl.training.expert_iteration",
                                description="Expert iteration: record the search agent's moves and the games' "
                                            "outcomes, fit its network to them; with --generations, repeatedly, "
                                            "each candidate gated against the last accepted policy "
                                            "(docs/search.md).")
    parser.add_argument("game", nargs="?", choices=envs.list_games(), help="game (not with --resume)")
    parser.add_argument("--resume", metavar="OUT", help="continue the run in this folder: record the games still "
                                                        "missing, then fit again (the earlier policy is kept)")
    parser.add_argument("--games", type=cli.count, help=f"games to record (per generation; default {defaults.games})")
    parser.add_argument("--generations", type=cli.count,
                        help=f"rounds of record, fit and gate (default {defaults.generations}: one round, no gate)")
    parser.add_argument("--gate-deals", type=cli.count, help="paired deals of the candidate policy against the last "
                                                             f"accepted one (default {defaults.gate_deals})")
    parser.add_argument("--gate-rule", choices=GATE_RULES,
                        help="a candidate is accepted if its mean margin over the last accepted policy is above 0 "
                             "(mean), or the low end of its 95 %% interval is (interval) (default "
                             f"{defaults.gate_rule})")
    parser.add_argument("--gate", choices=GATES,
                        help="last: the candidate head to head against the last accepted policy; opponent: its margin "
                             "against --opponent minus the last accepted policy's on the same deals, and head to head "
                             f"against the first policy as a check (default {defaults.gate})")
    parser.add_argument("--fresh", action="store_true", default=None,
                        help="fit each candidate as a new network of the same sizes, not the last accepted one")
    parser.add_argument("--window", type=int, help="pool the decisions of the last N generations, whatever they "
                                                   "searched with (default 0: those of the last accepted policy)")
    parser.add_argument("--value-coef", type=float, help="weight of the critic's squared error on the games' "
                                                         f"outcomes (default {defaults.value_coef}; 0: the critic "
                                                         "is left as it is)")
    parser.add_argument("--workers", type=cli.count, default=1, help="processes playing games at once (default 1)")
    parser.add_argument("--policy", default="pretrained", help="network to search with and fit (default pretrained)")
    parser.add_argument("--search", default="", metavar="K=V,…", help="further search options, e.g. worlds=64")
    parser.add_argument("--opponent", default="heuristic",
                        help="agent spec of the other seats, as evaluate takes them: random, heuristic, a policy file, "
                             "your own module:callable or path/to/file.py:callable, … (default heuristic)")
    parser.add_argument("--seed", type=cli.seed, default=defaults.seed)
    parser.add_argument("--epochs", type=cli.count, help=f"passes over the decisions (default {defaults.epochs})")
    parser.add_argument("--learning-rate", type=float, help=f"Adam's (default {defaults.learning_rate})")
    parser.add_argument("--batch-size", type=cli.count, help=f"decisions per step (default {defaults.batch_size})")
    parser.add_argument("--players", type=cli.count, help="player count (sets the game option num_players)")
    parser.add_argument("--out", help="output folder (default runs/expert_iteration/<game>; if it holds files "
                                      "already, <out>-2, <out>-3, … is used instead)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    given = {k: v for k, v in (("games", args.games), ("epochs", args.epochs), ("learning_rate", args.learning_rate),
                               ("batch_size", args.batch_size), ("generations", args.generations),
                               ("gate_deals", args.gate_deals), ("gate_rule", args.gate_rule),
                               ("value_coef", args.value_coef), ("gate", args.gate), ("fresh", args.fresh),
                               ("window", args.window)) if v is not None}
    if args.resume:
        if args.game:
            parser.error("--resume continues a run with its own game and search: give no game")
        if not (Path(args.resume) / "settings.json").is_file():
            parser.error(f"{Path(args.resume) / 'settings.json'} not found: not an expert-iteration run folder")
        try:
            saved = Settings.read(Path(args.resume) / "settings.json")
        except ValueError as error:
            parser.error(str(error))
        settings = replace(saved, **given)
        if (saved.generations == 1) != (settings.generations == 1):
            parser.error(f"--generations {settings.generations}: the run in {args.resume} has "
                         f"{saved.generations} generation{'s' if saved.generations > 1 else ''}, and a run of one "
                         "round keeps its files in another layout; give a number above 1 only to a run of several")
    elif not args.game:
        parser.error("give a game, or --resume OUT")
    else:
        settings = replace(defaults, game=args.game, options=cli.game_options([], args.players), policy=args.policy,
                           search=args.search, opponent=args.opponent, seed=args.seed, **given)
    try:  # bad options, files and specs fail before any folder is made or game played
        game = envs.make(settings.game, **settings.options).unwrapped.game
        settings = replace(settings, policy=str(policy_path(settings.policy, game)))
        settings.check()
        load_agent(settings.teacher, game)
        load_agent(settings.opponent, game)
    except ValueError as error:
        parser.error(str(error))
    out = Path(args.resume) if args.resume else new_folder(args.out or f"runs/expert_iteration/{args.game}")
    with stoppable(parser.prog, lambda: saved_so_far(settings, out)):
        keep_previous(out)
        atomic_write(out / "settings.json", json.dumps(asdict(settings), indent=1).encode())
        return run(settings, out, args.workers, not args.quiet)


if __name__ == "__main__":
    cli.run(main)

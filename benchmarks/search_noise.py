"""How much the search loses to noise: every searched decision's candidates scored again in many more worlds.

    python benchmarks/search_noise.py record lost_cities --games 24 --seed 21 --out runs/search_noise/s21.npz
    python benchmarks/search_noise.py report runs/search_noise/s21.npz [more files…]

`record`: the search (`--agent`, default `search`) plays `--games` games against `--opponent` (default the
heuristic), seats alternating. At each decision it searches, the same candidates are also played out in
`--reference` (default 512) more worlds sampled from its seat's view; their values (candidates × worlds) and
the candidates' log prior are saved (numpy arrays, no pickle; an existing `--out` is never overwritten).

`report`: decision rules are replayed on those values. The first half of the reference worlds stands in for
the worlds a rule would have sampled (a fixed number of worlds with some prior weight `c`, or racing the
candidates with `max_worlds` and `z`: `SearchAgent.race` itself runs, fed from the table); the second half,
which no rule saw, scores the move it picks. A rule's gain is its pick's mean value there minus the
baseline rule's (`--baseline`, default the default search's 32 worlds), per searched decision and, times the
searched decisions per game, per round; its cost is the play-outs it asked for, relative to the baseline's.
The values are the search's own (its network plays the play-outs), so the gains are what better estimates are
worth to its own objective, not what they win in games (docs/search.md, "Noise: more worlds where the
decision is close").
"""

from __future__ import annotations

import argparse
import io
from dataclasses import replace
from pathlib import Path

import numpy as np

import tabletop_rl
from tabletop_rl.envs.core.files import atomic_write
from tabletop_rl.envs.core.match import play_game
from tabletop_rl.training.evaluation.stats import mean_interval
from tabletop_rl.training.runtime.agents import load_agent
from tabletop_rl.training.runtime.search import SearchAgent, SearchSettings

BASELINE = "worlds=32"  # the default search
RULES = ("worlds=32,c=1", "worlds=32,c=0", "worlds=64", "worlds=128,c=1", "worlds=256,c=0",
         "worlds=32,max_worlds=128,c=0.5", "worlds=32,max_worlds=256,c=0.5", "worlds=32,max_worlds=256,c=1",
         "worlds=32,max_worlds=256,c=0", "worlds=32,max_worlds=256,c=0.5,z=1.5")


# --------------------------------------------------------------------------- record
def record(game_name: str, agent_spec: str, opponent: str, games: int, reference: int, seed: int,
           out: Path) -> None:
    if out.exists():  # checked before the games, which take minutes to hours
        raise SystemExit(f"{out} exists: give another --out (a recording is never overwritten)")
    env = tabletop_rl.make(game_name)
    game = env.unwrapped.game
    values, log_priors, sizes = [], [], []
    for g in range(games):
        deal = seed * 100_003 + g  # also seeds the search, and its scorer with deal + 1
        agent = load_agent(agent_spec, game, seed=deal)
        if not isinstance(agent, SearchAgent):
            raise SystemExit(f"--agent must be a search spec, not {agent_spec!r}")
        scorer = SearchAgent(game, replace(agent.settings, worlds=reference, max_worlds=0), agent.prior,
                             lambda rng, player=agent.player: player, seed=deal + 1)
        searched = agent.race

        def race(candidates, log_prior, agent=agent, scorer=scorer, searched=searched):
            scorer.attach(agent.view)
            values.append(scorer.evaluate(candidates))
            log_priors.append(log_prior)
            sizes.append(len(candidates))
            return searched(candidates, log_prior)

        agent.race = race  # this instance only: score every searched decision's candidates, then search as usual
        seats = [agent, load_agent(opponent, game, seed=g)]
        play_game(env, seats if g % 2 == 0 else seats[::-1], seed=deal)
        print(f"game {g + 1}/{games}: {len(sizes)} searched decisions so far", flush=True)
    buffer = io.BytesIO()
    np.savez(buffer, values=np.concatenate(values), log_prior=np.concatenate(log_priors), sizes=np.array(sizes),
             games=games, agent=agent_spec, opponent=opponent)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, buffer.getvalue())
    print(f"written to {out}")


# --------------------------------------------------------------------------- report
class Replay(SearchAgent):
    """``SearchAgent.race`` fed from recorded values: each batch of worlds is the next columns of ``table``
    (one row per candidate, the candidates being row numbers), in the order of ``columns``."""

    def __init__(self, settings: SearchSettings, table: np.ndarray, columns: np.ndarray):
        super().__init__(None, settings, None, lambda rng: None)
        self.table, self.columns, self.used, self.played = table, columns, 0, 0

    def evaluate(self, candidates: list[int]) -> np.ndarray:
        batch = self.columns[self.used:self.used + self.settings.worlds]
        self.used += self.settings.worlds
        self.played += len(candidates) * self.settings.worlds
        return self.table[candidates][:, batch]


def report(files: list[Path], baseline: str, rules: list[str], repeats: int, seed: int) -> None:
    data = [np.load(f) for f in files]
    values = [v for d in data for v in np.split(d["values"], np.cumsum(d["sizes"])[:-1])]
    log_priors = [p for d in data for p in np.split(d["log_prior"], np.cumsum(d["sizes"])[:-1])]
    per_game = len(values) / sum(int(d["games"]) for d in data)
    half = values[0].shape[1] // 2
    rng = np.random.default_rng(seed)
    settings = {rule: SearchSettings.parse(f"search:{rule}") for rule in (baseline, *rules)}
    for rule, s in settings.items():
        if max(s.worlds, s.max_worlds) > half:
            raise SystemExit(f"rule {rule!r} needs {max(s.worlds, s.max_worlds)} worlds; the recording has "
                             f"{half} to draw from (half of its reference worlds)")
    picked = {rule: np.zeros(len(values)) for rule in settings}
    cost = {rule: np.zeros(len(values)) for rule in settings}
    for i, (table, log_prior) in enumerate(zip(values, log_priors, strict=True)):
        judge = table[:, half:].mean(axis=1)
        for _ in range(repeats):
            columns = rng.permutation(half)
            for rule, s in settings.items():
                agent = Replay(s, table, columns)
                picked[rule][i] += judge[agent.race(list(range(len(table))), log_prior)] / repeats
                cost[rule][i] += agent.played / repeats
    print(f"{len(values)} searched decisions from {files[0] if len(files) == 1 else f'{len(files)} files'}, "
          f"{per_game:.1f} per game; {2 * half} reference worlds\n")
    print(f"| rule | gain per searched decision | gain per round | play-outs per decision (× {baseline}) |")
    print("|---|---|---|---:|")
    base_cost = cost[baseline].mean()
    for rule in settings:
        gain = mean_interval(picked[rule] - picked[baseline])
        per_round = mean_interval((picked[rule] - picked[baseline]) * per_game)
        print(f"| `{rule}` | {gain.text(digits=2)} | {per_round.text()} | {cost[rule].mean() / base_cost:.2f} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="play games and score every searched decision in more worlds")
    rec.add_argument("game")
    rec.add_argument("--agent", default="search")
    rec.add_argument("--opponent", default="heuristic")
    rec.add_argument("--games", type=int, default=24)
    rec.add_argument("--reference", type=int, default=512, help="worlds per searched decision (split in two)")
    rec.add_argument("--seed", type=int, default=21)
    rec.add_argument("--out", type=Path, required=True)
    rep = commands.add_parser("report", help="replay decision rules on recorded values")
    rep.add_argument("files", type=Path, nargs="+")
    rep.add_argument("--baseline", default=BASELINE, help="the rule gains are measured from")
    rep.add_argument("--rules", nargs="+", default=list(RULES), help="search options, e.g. worlds=64,c=1")
    rep.add_argument("--repeats", type=int, default=20, help="world orders per decision")
    rep.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "record":
        record(args.game, args.agent, args.opponent, args.games, args.reference, args.seed, args.out)
    else:
        report(args.files, args.baseline, args.rules, args.repeats, args.seed)


if __name__ == "__main__":
    main()

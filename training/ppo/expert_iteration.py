"""Expert iteration: distil the search agent's choices back into the policy network it searches with.

``search`` (docs/search.md) plays better than its network alone. One round of expert iteration records
what the search plays and trains the network to play that:

1. **record** — the search agent (the network as prior and play-out policy) plays ``games`` games against
   ``opponent`` agents, taking seat ``g mod n`` in game ``g``; each of its decisions with more than one
   legal action is stored: observation, action mask, the move it chose, whether it searched;
2. **fit** — the network's actor is trained on those moves (cross-entropy over the legal actions, a few
   epochs at a small learning rate, one tenth of the games held out to report agreement); the critic is
   kept as it was. The result is ``<out>/policy.safetensors``, a policy file like any other: evaluate it,
   or give it to the next round with ``--policy <out>``.

Recording costs nearly all the time (a searched decision takes ~0.2 s), so games are played in chunks of
``CHUNK`` spread over ``--workers`` processes and each chunk is saved when done
(``<out>/chunks/chunk_00000.npz``): ``--resume <out>`` continues a stopped run where it stopped (with
more games if ``--games`` says so) and fits. Game ``g`` is dealt and its agents seeded from
``SeedSequence([seed, g])``: the data do not depend on how many processes played them.

    python -m tabletop_rl.training.expert_iteration lost_cities --games 1000 --workers 2
    python -m tabletop_rl.training.expert_iteration --resume runs/expert_iteration/lost_cities --games 1400
    python -m tabletop_rl.training.evaluate lost_cities runs/expert_iteration/lost_cities heuristic --games 2000
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

import tabletop_rl
from tabletop_rl.envs.core.agents import Agent, SeatView, pass_view
from tabletop_rl.envs.core.match import play_game, score_margins

from . import cli
from .agents import agent_factory, load_agent, policy_path
from .evaluate import mean_interval
from .files import atomic_write, new_folder
from .policy import MLPPolicy, load_policy, save_policy
from .search import SearchSettings
from .stopping import stoppable
from .warm_start import parallel_map

CHUNK = 20  # games per saved chunk
HELD_OUT = 10  # every 10th chunk is held out of the fit: agreement is reported on it


@dataclass(frozen=True)
class Settings:
    """What a run records and fits (``settings.json``); ``games`` may grow when a run is resumed."""

    game: str
    options: dict[str, Any]
    policy: str  # the policy file searched with and fitted
    search: str  # further search options, "key=value,…" (docs/search.md)
    opponent: str
    games: int
    seed: int = 0
    epochs: int = 2
    learning_rate: float = 1e-4
    batch_size: int = 256

    @property
    def teacher(self) -> str:
        return f"search:policy={self.policy}" + (f",{self.search}" if self.search else "")

    def check(self) -> None:
        """Bad settings fail before any game is played, saying what is allowed."""
        if "policy=" in self.search:
            raise ValueError("give the network with --policy, not inside --search")
        SearchSettings.parse(self.teacher)  # a bad search option, or a path with a ","
        problems = [f"{name}={value} (expected at least 1)" for name, value in
                    (("games", self.games), ("epochs", self.epochs), ("batch_size", self.batch_size)) if value < 1]
        if not (np.isfinite(self.learning_rate) and self.learning_rate > 0):
            problems.append(f"learning_rate={self.learning_rate} (expected a number > 0)")
        if problems:
            raise ValueError("expert_iteration: bad setting " + "; ".join(problems))


# --------------------------------------------------------------------------- recording
class Recorder:
    """Wraps the search agent: passes its view on, and stores each of its decisions with a real choice."""

    def __init__(self, agent: Agent):
        self.agent = agent
        self.obs: list[np.ndarray] = []
        self.masks: list[np.ndarray] = []
        self.actions: list[int] = []
        self.searched: list[bool] = []

    def attach(self, view: SeatView) -> None:
        pass_view(self.agent, view)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        before = self.agent.searched
        action = self.agent.act(observation, action_mask)
        if np.count_nonzero(action_mask) > 1:
            self.obs.append(np.array(observation, np.float32))
            self.masks.append(np.array(action_mask, bool))
            self.actions.append(action)
            self.searched.append(self.agent.searched > before)
        return action


def record_chunk(settings: Settings, chunk: int) -> dict[str, np.ndarray]:
    """The decisions of the search agent in games ``chunk * CHUNK …`` and its score margin in each game."""
    env = tabletop_rl.make(settings.game, **settings.options)
    game = env.unwrapped.game
    players = len(env.possible_agents)
    make_teacher, make_opponent = agent_factory(settings.teacher, game), agent_factory(settings.opponent, game)
    recorders, margins = [], []
    for g in range(chunk * CHUNK, min((chunk + 1) * CHUNK, settings.games)):
        seed = int(np.random.SeedSequence([settings.seed, g]).generate_state(1)[0])
        seat = g % players
        recorder = Recorder(make_teacher(seed))
        agents = [recorder if s == seat else make_opponent(seed + s) for s in range(players)]
        _, scores = play_game(env, agents, seed=seed)
        margins.append(float(score_margins(scores)[seat]))
        recorders.append(recorder)
    return {"obs": np.array([o for r in recorders for o in r.obs], np.float32).reshape(-1, game.observation_size),
            "masks": np.array([m for r in recorders for m in r.masks], bool).reshape(-1, game.num_actions),
            "actions": np.array([a for r in recorders for a in r.actions], np.int64),
            "searched": np.array([s for r in recorders for s in r.searched], bool),
            "margins": np.array(margins, np.float64)}


def chunk_path(out: Path, chunk: int) -> Path:
    return out / "chunks" / f"chunk_{chunk:05d}.npz"


def recorded_games(settings: Settings, out: Path) -> int:
    """How many of the run's games are saved in ``out/chunks``."""
    return sum(min(CHUNK, settings.games - c * CHUNK) for c in range(-(-settings.games // CHUNK))
               if chunk_path(out, c).is_file())


def _record_compressed(settings: Settings, chunk: int) -> tuple[int, int, bytes]:
    """Chunk number, games and ``.npz`` file contents of a chunk (the worker writes no file: a stopped
    worker is killed, and the main process writes each chunk atomically)."""
    data = record_chunk(settings, chunk)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **data)
    return chunk, len(data["margins"]), buffer.getvalue()


def record(settings: Settings, out: Path, workers: int = 1, progress: bool = True) -> None:
    """Play every chunk not yet saved in ``out/chunks``, in ``workers`` processes."""
    (out / "chunks").mkdir(parents=True, exist_ok=True)
    todo = [c for c in range(-(-settings.games // CHUNK)) if not chunk_path(out, c).is_file()]
    with tqdm(total=settings.games, initial=recorded_games(settings, out), unit="game", desc="search games",
              disable=not progress, mininterval=1) as bar:
        for chunk, games, payload in parallel_map(_record_compressed, [(settings, c) for c in todo], workers,
                                                  ordered=False):
            atomic_write(chunk_path(out, chunk), payload)
            bar.update(games)


def load_chunks(out: Path, games: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The recorded decisions of the first ``games`` games: (fit part, held-out part)."""
    parts: dict[bool, list] = {True: [], False: []}
    for c in range(-(-games // CHUNK)):
        with np.load(chunk_path(out, c)) as data:
            parts[c % HELD_OUT == HELD_OUT - 1].append({k: data[k] for k in data.files})
    return tuple({k: np.concatenate([p[k] for p in parts[held]]) if parts[held] else np.zeros(0)
                  for k in ("obs", "masks", "actions", "searched", "margins")} for held in (False, True))


# --------------------------------------------------------------------------- fitting
def fit(policy: MLPPolicy, data: dict[str, np.ndarray], held_out: dict[str, np.ndarray], epochs: int,
        learning_rate: float, batch_size: int, seed: int, report: Any = print) -> dict[str, np.ndarray]:
    """The actor's weights after ``epochs`` passes over ``data`` (cross-entropy over the legal moves; the
    critic's weights are returned unchanged). ``report`` gets one line per epoch on the held-out games."""
    import torch

    torch.manual_seed(seed)
    weights = {k: torch.tensor(v) for k, v in policy.weights.items()}
    names = [f"mlp_extractor.policy_net.{2 * i}" for i in range(len(policy.info.network["pi"]))] + ["action_net"]
    actor = [weights[f"{n}.{part}"].requires_grad_() for n in names for part in ("weight", "bias")]
    activation = {"relu": torch.relu, "tanh": torch.tanh}[policy.info.network["activation"]]

    def masked_logits(obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        x = obs
        for i, n in enumerate(names):
            x = x @ weights[f"{n}.weight"].T + weights[f"{n}.bias"]
            if i < len(names) - 1:
                x = activation(x)
        return x.masked_fill(~masks, -torch.inf)

    tensors = {k: torch.as_tensor(v) for k, v in data.items() if k != "margins"}
    held = {k: torch.as_tensor(v) for k, v in held_out.items() if k != "margins"}

    def agreement(when: str) -> None:
        if not len(held_out["actions"]):
            return
        with torch.no_grad():
            logits = masked_logits(held["obs"], held["masks"])
            loss = torch.nn.functional.cross_entropy(logits, held["actions"]).item()
            agree = (logits.argmax(1) == held["actions"]).float()
        searched = held["searched"]
        report(f"{when}: held-out cross-entropy {loss:.4f}, agreement with the search {100 * agree.mean():.1f}% "
               f"({100 * agree[searched].mean():.1f}% where it searched)")

    optimizer = torch.optim.Adam(actor, lr=learning_rate)
    generator = torch.Generator().manual_seed(seed)
    agreement("before")
    for epoch in range(epochs):
        for batch in torch.randperm(len(tensors["actions"]), generator=generator).split(batch_size):
            loss = torch.nn.functional.cross_entropy(masked_logits(tensors["obs"][batch], tensors["masks"][batch]),
                                                     tensors["actions"][batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        agreement(f"epoch {epoch + 1}")
    return {k: v.detach().numpy() for k, v in weights.items()}


# --------------------------------------------------------------------------- the run
def run(settings: Settings, out: Path, workers: int = 1, progress: bool = True) -> Path:
    """Record what is missing, fit, and write ``out/policy.safetensors`` and ``out/report.json``."""
    say = tqdm.write if progress else print
    record(settings, out, workers, progress)
    data, held_out = load_chunks(out, settings.games)
    policy = load_policy(settings.policy)
    margins = mean_interval(np.concatenate([data["margins"], held_out["margins"]]).tolist())
    say(f"{settings.games} games of {settings.teacher} against {settings.opponent}: margin {margins.text()}; "
        f"{len(data['actions']):,} decisions to fit ({int(data['searched'].sum()):,} searched), "
        f"{len(held_out['actions']):,} held out")
    lines: list[str] = []

    def report(line: str) -> None:
        lines.append(line)
        say(line)

    weights = fit(policy, data, held_out, settings.epochs, settings.learning_rate, settings.batch_size,
                  settings.seed, report)
    info = replace(policy.info, provenance={"expert_iteration": {**asdict(settings), "out": str(out)},
                                            "from": policy.info.provenance})
    save_policy(out / "policy.safetensors", weights, info)
    atomic_write(out / "report.json", json.dumps({"settings": asdict(settings), "margin": margins.text(),
                                                  "decisions": len(data["actions"]), "fit": lines}, indent=1).encode())
    say(f"wrote {out / 'policy.safetensors'}")
    return out / "policy.safetensors"


def keep_previous(out: Path) -> None:
    """A refit never overwrites: an earlier ``policy.safetensors`` / ``report.json`` become ``…-1``, ``…-2``, …"""
    if not (out / "policy.safetensors").exists():
        return
    k = 1
    while (out / f"policy-{k}.safetensors").exists():
        k += 1
    (out / "policy.safetensors").rename(out / f"policy-{k}.safetensors")
    if (out / "report.json").exists():
        (out / "report.json").rename(out / f"report-{k}.json")


def main(argv: Sequence[str] | None = None) -> Path:
    defaults = Settings("", {}, "", "", "", 1000)
    parser = cli.ArgumentParser(prog="python -m tabletop_rl.training.expert_iteration",
                                description="One round of expert iteration: record the search agent's moves, fit "
                                            "its network to them (docs/search.md).")
    parser.add_argument("game", nargs="?", choices=tabletop_rl.envs.list_games(), help="game (not with --resume)")
    parser.add_argument("--resume", metavar="OUT", help="continue the run in this folder: record the games still "
                                                        "missing, then fit again (the earlier policy is kept)")
    parser.add_argument("--games", type=cli.count, help=f"games to record (default {defaults.games})")
    parser.add_argument("--workers", type=cli.count, default=1, help="processes playing games at once (default 1)")
    parser.add_argument("--policy", default="pretrained", help="network to search with and fit (default pretrained)")
    parser.add_argument("--search", default="", metavar="K=V,…", help="further search options, e.g. worlds=64")
    parser.add_argument("--opponent", default="heuristic", help="agent spec of the other seats (default heuristic)")
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
                               ("batch_size", args.batch_size)) if v is not None}
    if args.resume:
        if args.game:
            parser.error("--resume continues a run with its own game and search: give no game")
        if not (Path(args.resume) / "settings.json").is_file():
            parser.error(f"{Path(args.resume) / 'settings.json'} not found: not an expert-iteration run folder")
        settings = replace(Settings(**json.loads((Path(args.resume) / "settings.json").read_text())), **given)
    elif not args.game:
        parser.error("give a game, or --resume OUT")
    else:
        settings = replace(defaults, game=args.game, options=cli.game_options([], args.players), policy=args.policy,
                           search=args.search, opponent=args.opponent, seed=args.seed, **given)
    try:  # bad options, files and specs fail before any folder is made or game played
        game = tabletop_rl.make(settings.game, **settings.options).unwrapped.game
        settings = replace(settings, policy=str(policy_path(settings.policy, game)))
        settings.check()
        load_agent(settings.teacher, game)
        load_agent(settings.opponent, game)
    except ValueError as error:
        parser.error(str(error))
    out = Path(args.resume) if args.resume else new_folder(args.out or f"runs/expert_iteration/{args.game}")
    with stoppable(parser.prog, lambda: f"{recorded_games(settings, out)} of {settings.games} games are saved in "
                                        f"{out / 'chunks'}; --resume {out} continues"):
        keep_previous(out)
        atomic_write(out / "settings.json", json.dumps(asdict(settings), indent=1).encode())
        return run(settings, out, args.workers, not args.quiet)


if __name__ == "__main__":
    main()

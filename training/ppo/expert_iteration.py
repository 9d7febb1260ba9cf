"""Expert iteration: distil the search agent's choices back into the policy network it searches with
(``python -m tabletop_rl.training.expert_iteration``; docs/search.md, "Expert iteration").

:func:`record` plays the games in chunks of ``CHUNK`` (each saved when done, so a stopped run resumes) over
worker processes; game g is dealt and its agents seeded from ``SeedSequence([seed, g])``, so the data do not
depend on how many processes played them. :func:`fit` trains the actor on the recorded moves with the
imitation fitter, every ``HELD_OUT``-th chunk held out to report agreement; :func:`run` does both and writes
the policy file.
"""

from __future__ import annotations

import io
import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from ... import envs
from ...envs.core.agents import Agent, SeatView, pass_view
from ...envs.core.files import atomic_write
from ...envs.core.match import play_game, score_margins
from ...envs.core.versions import PACKAGE_VERSION
from ..cli.stopping import parallel_map
from ..evaluation.stats import mean_interval
from ..runtime.agents import agent_factory
from ..runtime.policy import MLPPolicy, load_policy, save_policy
from ..runtime.search import SearchSettings

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

    @classmethod
    def read(cls, path: Path) -> Settings:
        """The settings a run saved in ``path``; a damaged file is a ``ValueError`` naming it."""
        kinds = {"game": str, "options": dict, "policy": str, "search": str, "opponent": str, "games": int,
                 "seed": int, "epochs": int, "learning_rate": (int, float), "batch_size": int}
        try:
            doc = json.loads(path.read_bytes().decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:  # a JSONDecodeError is a ValueError
            raise ValueError(f"{path} is not the JSON an expert-iteration run writes: {error}") from None
        if not isinstance(doc, dict) or set(doc) != set(kinds):
            raise ValueError(f"{path} does not hold an expert-iteration run's settings: expected a JSON object with "
                             f"the keys {', '.join(kinds)}")
        wrong = [k for k, kind in kinds.items() if isinstance(doc[k], bool) or not isinstance(doc[k], kind)]
        if wrong:
            raise ValueError(f"{path}: {wrong[0]}={doc[wrong[0]]!r} is not of the type an expert-iteration run "
                             "writes")
        return cls(**doc)

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
    env = envs.make(settings.game, **settings.options)
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
    """The policy's weights after ``epochs`` passes of :func:`.imitation.fit` over ``data`` (the actor only: the
    critic's weights are returned unchanged). ``report`` gets one line per epoch on the held-out games."""
    import torch

    from . import imitation
    from .network import ActorCritic, MatmulLinear, load_weights, weights_of

    net = ActorCritic(policy.info, MatmulLinear)
    load_weights(net, policy.weights)

    def agreement(when: str) -> None:
        if not len(held_out["actions"]):
            return
        agree, loss = imitation.agreement(net, held_out["obs"], held_out["masks"], held_out["actions"])
        searched = torch.as_tensor(held_out["searched"])
        report(f"{when}: held-out cross-entropy {loss:.4f}, agreement with the search {100 * agree.mean():.1f}% "
               f"({100 * agree[searched].mean():.1f}% where it searched)")

    agreement("before")
    imitation.fit(net, data, epochs, batch_size, learning_rate, torch.Generator().manual_seed(seed),
                  after_epoch=lambda epoch: agreement(f"epoch {epoch + 1}"))
    return weights_of(net)


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
                                            "from": policy.info.provenance},
                   game_version=envs.game_version(policy.info.game), tabletop_rl=PACKAGE_VERSION)  # fitted now
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

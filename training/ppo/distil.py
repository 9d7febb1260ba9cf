"""Expert iteration: distil the search agent's choices, and the games' outcomes, back into the policy network it
searches with (``python -m tabletop_rl.training.expert_iteration``; docs/search.md, "Expert iteration").

:func:`record` plays the games in chunks of ``CHUNK`` (each saved when done, so a stopped run resumes) over
worker processes; game g is dealt and its agents seeded from ``SeedSequence([seed, g])``, so the data do not
depend on how many processes played them. :func:`fit` trains the actor on the recorded moves and the critic on
the recorded outcomes with the imitation fitter, every ``HELD_OUT``-th chunk held out to report agreement and
value error; :func:`fit_round` records, fits and writes a policy in one folder. :func:`run` does one round, or
``generations`` of them, each candidate gated (:func:`gate`): head to head against the last accepted policy, or,
as gnabcel/lost-cities-ai gates, against the opponent, deal by deal beside the last accepted policy, and head to
head against the fixed starting policy as well. A candidate may be a fresh network fitted on the decisions of the
last ``window`` generations (``fresh``), as that recipe does, instead of the last accepted policy fitted further.
"""

from __future__ import annotations

import csv
import io
import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from ... import envs
from ...envs.core.agents import Agent, SeatView, pass_view
from ...envs.core.files import atomic_write
from ...envs.core.match import play_game, score_margins, seat_among
from ...envs.core.versions import PACKAGE_VERSION
from ..evaluation.stats import Estimate, mean_interval
from ..evaluation.tournament import tournament
from ..runtime.agents import agent_factory
from ..runtime.policy import MLPPolicy, load_policy, save_policy
from ..runtime.processes import parallel_map
from ..runtime.search import SearchSettings

CHUNK = 20  # games per saved chunk
HELD_OUT = 10  # every 10th chunk is held out of the fit: agreement and value error are reported on it
GATE_RULES = ("mean", "interval")  # docs/search.md, "Generations, gated"
GATES = ("last", "opponent")  # what the candidate is measured against: the last accepted policy, or the opponent
KEYS = ("obs", "masks", "actions", "searched", "outcomes", "margins")  # a chunk's arrays (older ones lack outcomes)


@dataclass(frozen=True)
class Settings:
    """What a run records, fits and gates (``settings.json``); ``games`` and ``generations`` may grow when a run
    is resumed."""

    game: str
    options: dict[str, Any]
    policy: str  # the policy file searched with and fitted (in generation 1; later, the last accepted one)
    search: str  # further search options, "key=value,…" (docs/search.md)
    opponent: str
    games: int  # per generation
    seed: int = 0
    epochs: int = 2
    learning_rate: float = 1e-4
    batch_size: int = 256
    generations: int = 1
    gate_deals: int = 2000
    gate_rule: str = "interval"  # a candidate is accepted if its margin's 95 % interval (or, "mean": its mean) is > 0
    value_coef: float = 0.5  # weight of the critic's squared error in the fit; 0: the critic is left as it is
    gate: str = "last"  # "opponent": the candidate's margin against the opponent minus the last accepted one's
    fresh: bool = False  # each candidate a new network of the same sizes, not the last accepted one fitted further
    window: int = 0  # the fit pools the last `window` generations' decisions; 0: those recorded with the same policy

    NEWER = ("generations", "gate_deals", "gate_rule", "value_coef", "gate", "fresh", "window")  # an older run lacks

    @classmethod
    def read(cls, path: Path) -> Settings:
        """The settings a run saved in ``path``; a damaged file is a ``ValueError`` naming it."""
        kinds = {"game": str, "options": dict, "policy": str, "search": str, "opponent": str, "games": int,
                 "seed": int, "epochs": int, "learning_rate": (int, float), "batch_size": int, "generations": int,
                 "gate_deals": int, "gate_rule": str, "value_coef": (int, float), "gate": str, "fresh": bool,
                 "window": int}
        try:
            doc = json.loads(path.read_bytes().decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:  # a JSONDecodeError is a ValueError
            raise ValueError(f"{path} is not the JSON an expert-iteration run writes: {error}") from None
        if not isinstance(doc, dict) or not set(kinds) - set(cls.NEWER) <= set(doc) <= set(kinds):
            raise ValueError(f"{path} does not hold an expert-iteration run's settings: expected a JSON object with "
                             f"the keys {', '.join(kinds)}")
        wrong = [k for k in doc  # a bool is an int to isinstance: only the boolean keys may hold one
                 if isinstance(doc[k], bool) is not (kinds[k] is bool) or not isinstance(doc[k], kinds[k])]
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
                    (("games", self.games), ("epochs", self.epochs), ("batch_size", self.batch_size),
                     ("generations", self.generations), ("gate_deals", self.gate_deals)) if value < 1]
        if not (np.isfinite(self.learning_rate) and self.learning_rate > 0):
            problems.append(f"learning_rate={self.learning_rate} (expected a number > 0)")
        if self.gate_rule not in GATE_RULES:
            problems.append(f"gate_rule={self.gate_rule!r} (expected one of {', '.join(GATE_RULES)})")
        if not (np.isfinite(self.value_coef) and self.value_coef >= 0):
            problems.append(f"value_coef={self.value_coef} (expected a number >= 0)")
        if self.gate not in GATES:
            problems.append(f"gate={self.gate!r} (expected one of {', '.join(GATES)})")
        if self.window < 0:
            problems.append(f"window={self.window} (expected 0 or more generations)")
        if self.fresh and self.value_coef == 0:
            problems.append("fresh=True with value_coef=0 (a fresh network's critic must be fitted too)")
        if (self.fresh or self.window or self.gate != "last") and self.generations == 1:
            problems.append("fresh, window and gate shape generations: give generations > 1")
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
    """The decisions of the search agent in games ``chunk * CHUNK …``, each with its game's return for the search
    seat (``outcomes``: the final reward, the scale the critic is trained on), and its score margin in each game."""
    env = envs.make(settings.game, **settings.options)
    game = env.unwrapped.game
    players = len(env.possible_agents)
    make_teacher, make_opponent = agent_factory(settings.teacher, game), agent_factory(settings.opponent, game)
    recorders, outcomes, margins = [], [], []
    for g in range(chunk * CHUNK, min((chunk + 1) * CHUNK, settings.games)):
        seed = int(np.random.SeedSequence([settings.seed, g]).generate_state(1)[0])
        seat = g % players
        recorder = Recorder(make_teacher(seed))
        others = [make_opponent(seed + s) for s in range(players) if s != seat]
        returns, scores = play_game(env, seat_among(recorder, others, seat), seed=seed)
        margins.append(float(score_margins(scores)[seat]))
        outcomes += [float(returns[seat])] * len(recorder.actions)
        recorders.append(recorder)
    return {"obs": np.array([o for r in recorders for o in r.obs], np.float32).reshape(-1, game.observation_size),
            "masks": np.array([m for r in recorders for m in r.masks], bool).reshape(-1, game.num_actions),
            "actions": np.array([a for r in recorders for a in r.actions], np.int64),
            "searched": np.array([s for r in recorders for s in r.searched], bool),
            "outcomes": np.array(outcomes, np.float32),
            "margins": np.array(margins, np.float64)}


def chunks(games: int) -> range:
    """The numbers of the chunks that ``games`` games fill (the last one may hold fewer than ``CHUNK``)."""
    return range(-(-games // CHUNK))


def chunk_path(out: Path, chunk: int) -> Path:
    return out / "chunks" / f"chunk_{chunk:05d}.npz"


def recorded_games(settings: Settings, out: Path) -> int:
    """How many of ``settings.games`` games are saved in ``out/chunks``."""
    return sum(min(CHUNK, settings.games - c * CHUNK) for c in chunks(settings.games)
               if chunk_path(out, c).is_file())


def _record_compressed(settings: Settings, chunk: int) -> tuple[int, int, bytes]:
    """Chunk number, games and ``.npz`` file contents of a chunk, with the CPU seconds it took (the worker
    writes no file: a stopped worker is killed, and the main process writes each chunk atomically)."""
    start = time.process_time()
    data = record_chunk(settings, chunk)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **data, seconds=np.float64(time.process_time() - start))
    return chunk, len(data["margins"]), buffer.getvalue()


def record(settings: Settings, out: Path, workers: int = 1, progress: bool = True) -> None:
    """Play every chunk not yet saved in ``out/chunks``, in ``workers`` processes."""
    (out / "chunks").mkdir(parents=True, exist_ok=True)
    todo = [c for c in chunks(settings.games) if not chunk_path(out, c).is_file()]
    with tqdm(total=settings.games, initial=recorded_games(settings, out), unit="game", desc="search games",
              disable=not progress, mininterval=1) as bar:
        for chunk, games, payload in parallel_map(_record_compressed, [(settings, c) for c in todo], workers,
                                                  ordered=False):
            atomic_write(chunk_path(out, chunk), payload)
            bar.update(games)


def load_chunks(out: Path, games: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The recorded decisions of the first ``games`` games: (fit part, held-out part). A chunk recorded before
    outcomes were has NaN outcomes (the fit leaves those decisions out of the critic's loss)."""
    parts: dict[bool, list] = {True: [], False: []}
    for c in chunks(games):
        with np.load(chunk_path(out, c)) as data:
            chunk = {k: data[k] for k in KEYS if k in data.files}
        chunk.setdefault("outcomes", np.full(len(chunk["actions"]), np.nan, np.float32))
        parts[c % HELD_OUT == HELD_OUT - 1].append(chunk)
    return join(parts[False]), join(parts[True])


def join(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Recorded decisions, concatenated key by key; parts of no games (an empty held-out part) are left out, and
    no parts at all are empty arrays."""
    parts = [p for p in parts if len(p["margins"])]
    return {k: np.concatenate([p[k] for p in parts]) if parts else np.zeros(0) for k in KEYS}


def recording_minutes(out: Path, games: int) -> float:
    """CPU minutes the chunks of ``games`` games took to record (a chunk saved without its time counts 0)."""
    seconds = 0.0
    for c in chunks(games):
        with np.load(chunk_path(out, c)) as data:
            seconds += float(data["seconds"]) if "seconds" in data.files else 0.0
    return seconds / 60


# --------------------------------------------------------------------------- fitting
def fit(policy: MLPPolicy, data: dict[str, np.ndarray], held_out: dict[str, np.ndarray], epochs: int,
        learning_rate: float, batch_size: int, seed: int, report: Any = print, value_coef: float = 0.0,
        fresh: bool = False) -> tuple[dict[str, np.ndarray], dict[str, list[float]]]:
    """The policy's weights after ``epochs`` passes of :func:`.imitation.fit` over ``data``: the actor towards
    the recorded actions and, with ``value_coef`` > 0, the critic towards the recorded outcomes (else its weights
    are returned unchanged); and the held-out measures before and after each epoch (``agreement``,
    ``agreement_searched``, ``cross_entropy``, ``value_mse``; NaN where nothing is held out). ``report`` gets
    one line per measurement. ``fresh``: a new network of the policy's sizes (initialised from ``seed``) is fitted
    instead of the policy's weights."""
    import torch

    from . import imitation
    from .network import ActorCritic, MatmulLinear, load_weights, values, weights_of

    torch.manual_seed(seed)
    net = ActorCritic(policy.info, MatmulLinear)
    if not fresh:
        load_weights(net, policy.weights)
    measures: dict[str, list[float]] = {"agreement": [], "agreement_searched": [], "cross_entropy": [],
                                        "value_mse": []}
    known = ~np.isnan(held_out["outcomes"])

    def measure(when: str) -> None:
        if not len(held_out["actions"]):
            for series in measures.values():
                series.append(float("nan"))
            return
        agree, loss = imitation.agreement(net, held_out["obs"], held_out["masks"], held_out["actions"])
        searched = torch.as_tensor(held_out["searched"])
        with torch.no_grad():
            error = (values(net, torch.as_tensor(held_out["obs"][known])) - torch.as_tensor(
                held_out["outcomes"][known])).square().mean().item() if known.any() else float("nan")
        for key, value in (("agreement", agree.mean().item()), ("agreement_searched", agree[searched].mean().item()),
                           ("cross_entropy", loss), ("value_mse", error)):
            measures[key].append(value)
        report(f"{when}: held-out cross-entropy {loss:.4f}, agreement with the search {100 * agree.mean():.1f}% "
               f"({100 * agree[searched].mean():.1f}% where it searched), value error {error:.4f}")

    measure("before")
    fitted = {k: data[k] for k in ("obs", "masks", "actions")} | {"rewards": data["outcomes"]}
    imitation.fit(net, fitted, epochs, batch_size, learning_rate, torch.Generator().manual_seed(seed),
                  vf_coef=value_coef or None, after_epoch=lambda epoch: measure(f"epoch {epoch + 1}"))
    return weights_of(net), measures


def fit_round(settings: Settings, out: Path, pool: list[tuple[Path, int]], workers: int = 1,
              progress: bool = True) -> dict[str, Any]:
    """Record what is missing of ``settings.games`` games in ``out``, fit ``settings.policy`` on the decisions
    of ``pool`` (folders and their games; ``out`` among them), write ``out/policy.safetensors`` and
    ``out/report.json``, and return the report."""
    say = tqdm.write if progress else print
    record(settings, out, workers, progress)
    loaded = [load_chunks(folder, games) for folder, games in pool]
    data, held_out = join([d for d, _ in loaded]), join([h for _, h in loaded])
    margins = mean_interval(join(list(loaded[-1]))["margins"].tolist())  # this round's games (pool ends with out)
    unknown = int(np.isnan(data["outcomes"]).sum())
    say(f"{settings.games} games of {settings.teacher} against {settings.opponent}: margin {margins.text()}; "
        f"{len(data['actions']):,} decisions to fit ({int(data['searched'].sum()):,} searched"
        + (f", from {len(pool)} generations" if len(pool) > 1 else "") + f"), {len(held_out['actions']):,} held out"
        + (f"; {unknown:,} recorded without their game's outcome: the critic is not fitted on those" if unknown
           and settings.value_coef else ""))
    lines: list[str] = []

    def report(line: str) -> None:
        lines.append(line)
        say(line)

    policy = load_policy(settings.policy)
    start = time.process_time()
    weights, measures = fit(policy, data, held_out, settings.epochs, settings.learning_rate, settings.batch_size,
                            settings.seed, report, settings.value_coef, settings.fresh)
    info = replace(policy.info, provenance={"expert_iteration": {**asdict(settings), "out": str(out)},
                                            "from": policy.info.provenance},
                   game_version=envs.game_version(policy.info.game), tabletop_rl=PACKAGE_VERSION)  # fitted now
    save_policy(out / "policy.safetensors", weights, info)
    doc = {"settings": asdict(settings), "margin": margins.text(), "decisions": len(data["actions"]),
           "pooled": [str(folder) for folder, _ in pool], "fit": lines, "held_out": measures,
           "minutes": {"record": recording_minutes(out, settings.games),
                       "fit": (time.process_time() - start) / 60}}
    atomic_write(out / "report.json", json.dumps(doc, indent=1).encode())
    say(f"wrote {out / 'policy.safetensors'}")
    return doc


# --------------------------------------------------------------------------- generations
def gate(settings: Settings, candidate: Path, last: str, folder: Path, start: str = "") -> dict[str, Any]:
    """The candidate policy alone over ``settings.gate_deals`` deals, each played in every seat rotation (more than
    two players: the candidate with n − 1 copies of the other), the other being, by ``settings.gate``,

    * ``last``: the last accepted policy alone; the margin is the candidate's mean score margin per round over the
      deals (own score minus the mean of the others'), with its 95 % interval;
    * ``opponent``: the opponent; the margin is the candidate's margin there minus the last accepted policy's
      against the opponent on the same deals and seats, deal by deal, with its 95 % interval. The candidate then
      also plays the fixed ``start`` policy (the run's first) head to head: reported, not deciding, as a check that
      it did not learn only to exploit the opponent.

    Its games go to ``folder/gate-games.csv``. The result says whether it is accepted (:func:`accepted`)."""
    began = time.process_time()
    n = envs.make(settings.game, wrapped=False, **settings.options).game.num_players

    def play(specs: list[str]) -> Any:
        return tournament(settings.game, specs, options=settings.options, games_per_pairing=settings.gate_deals * n,
                          seed=settings.seed, one_vs_rest=True)

    if settings.gate == "last":
        results = play([str(candidate), last])
        margin = results.stats[0].margin
        fixed = None
    else:  # table 0: against the opponent (the same deals, seats and opponent seeds in both tournaments)
        results = play([str(candidate), settings.opponent, start])
        mine, theirs = results.deal_margins[0], play([last, settings.opponent]).deal_margins[0]
        margin = mean_interval([mine[d] - theirs[d] for d in sorted(mine) if d[0] == 0])
        fixed = results.pairs[0, 2].margin
    atomic_write(folder / "gate-games.csv", results.games_csv().encode())
    return {"against": last if settings.gate == "last" else f"{settings.opponent}, beside {last}",
            "deals": results.deals, "margin": [margin.mean, margin.low, margin.high],
            "fixed": None if fixed is None else {"against": start, "margin": [fixed.mean, fixed.low, fixed.high]},
            "rule": settings.gate_rule, "accepted": accepted(margin, settings.gate_rule),
            "minutes": (time.process_time() - began) / 60}


def accepted(margin: Estimate, rule: str) -> bool:
    """The gate's verdict on the candidate's margin over the last accepted policy: rule "mean", its mean is above
    0; rule "interval", the low end of its 95 % interval is (the candidate measurably better)."""
    return bool((margin.mean if rule == "mean" else margin.low) > 0)


def generation_seed(seed: int, generation: int) -> int:
    """Generation 1 records with the run's seed (as a one-round run does); a later one with a seed of its own."""
    return seed if generation == 1 else int(np.random.SeedSequence([seed, generation]).generate_state(1)[0])


def run_generation(settings: Settings, out: Path, k: int, last: str, pool: list[tuple[Path, int]], workers: int,
                   progress: bool) -> dict[str, Any]:
    """Generation ``k`` in ``out/gen-k``: record with ``last`` (the last accepted policy), fit a candidate on
    ``pool`` and this generation's decisions, gate it; its row of ``generations.csv``. What ``gen-k`` holds
    already (chunks, the candidate, the gate's result) is used, not recomputed."""
    folder = out / f"gen-{k}"
    mine = replace(settings, policy=last, seed=generation_seed(settings.seed, k))
    if not (folder / "report.json").is_file():
        folder.mkdir(exist_ok=True)
        fit_round(mine, folder, [*pool, (folder, mine.games)], workers, progress)
    report = json.loads((folder / "report.json").read_text())
    if not (folder / "gate.json").is_file():
        verdict = gate(mine, folder / "policy.safetensors", last, folder, settings.policy)
        atomic_write(folder / "gate.json", json.dumps(verdict, indent=1).encode())
    result = json.loads((folder / "gate.json").read_text())
    held = report["held_out"]
    fixed = (result.get("fixed") or {}).get("margin", [float("nan")] * 3)
    return {"generation": k, "games": report["settings"]["games"], "searched_with": last,
            "decisions_fitted": report["decisions"], "pooled_generations": len(report["pooled"]),
            "agreement_searched_before": held["agreement_searched"][0],
            "agreement_searched_after": held["agreement_searched"][-1],
            "value_mse_before": held["value_mse"][0], "value_mse_after": held["value_mse"][-1],
            "gate_deals": result["deals"], "gate_margin": result["margin"][0], "gate_low": result["margin"][1],
            "gate_high": result["margin"][2], "accepted": result["accepted"],
            "fixed_margin": fixed[0], "fixed_low": fixed[1], "fixed_high": fixed[2],
            "record_minutes": report["minutes"]["record"], "fit_minutes": report["minutes"]["fit"],
            "gate_minutes": result["minutes"]}


def summary(row: dict[str, Any]) -> str:
    """A generation's row in one line."""
    def pct(x: float) -> str:
        return "—" if np.isnan(x) else f"{100 * x:.1f}%"

    return (f"generation {row['generation']}: {row['games']} games, {row['decisions_fitted']:,} decisions fitted; "
            f"held-out agreement where searched {pct(row['agreement_searched_before'])} → "
            f"{pct(row['agreement_searched_after'])}, value error {row['value_mse_before']:.4f} → "
            f"{row['value_mse_after']:.4f}; gate {row['gate_margin']:+.2f} [{row['gate_low']:+.2f}, "
            f"{row['gate_high']:+.2f}] per round over {row['gate_deals']} deals"
            + ("" if np.isnan(row["fixed_margin"]) else f" (head to head against the first policy "
               f"{row['fixed_margin']:+.2f} [{row['fixed_low']:+.2f}, {row['fixed_high']:+.2f}])") + ": "
            f"{'accepted' if row['accepted'] else 'rejected'}; CPU minutes record {row['record_minutes']:.1f}, "
            f"fit {row['fit_minutes']:.1f}, gate {row['gate_minutes']:.1f}")


def run_generations(settings: Settings, out: Path, workers: int = 1, progress: bool = True) -> Path:
    """``settings.generations`` generations in ``out/gen-1``, ``gen-2``, …; a candidate the gate accepts
    (:func:`accepted`, by ``settings.gate_rule``) becomes the next generation's search network, and the next fit
    pools only the generations recorded with that network (a rejected candidate's data are pooled into the next
    fit, an accepted one's are not), or, with ``settings.window``, the last ``window`` generations whatever they
    searched with. Writes ``generations.csv`` and ``policy.safetensors``, the last accepted policy."""
    say = tqdm.write if progress else print
    last, pool, rows = settings.policy, [], []
    for k in range(1, settings.generations + 1):
        rows.append(run_generation(settings, out, k, last, pool, workers, progress))
        say(summary(rows[-1]))
        folder = out / f"gen-{k}"
        if settings.window:
            pool = [*pool, (folder, rows[-1]["games"])][-(settings.window - 1):] if settings.window > 1 else []
        elif rows[-1]["accepted"]:
            pool = []
        else:
            pool = [*pool, (folder, rows[-1]["games"])]
        if rows[-1]["accepted"]:
            last = str(folder / "policy.safetensors")
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        atomic_write(out / "generations.csv", buffer.getvalue().encode())
    atomic_write(out / "policy.safetensors", Path(last).read_bytes())
    say(f"wrote {out / 'policy.safetensors'}: " + (f"the candidate of {Path(last).parent.name}"
                                                    if last != settings.policy else
                                                    f"no candidate was accepted, the starting policy {last}"))
    return out / "policy.safetensors"


def run(settings: Settings, out: Path, workers: int = 1, progress: bool = True) -> Path:
    """One round (``generations`` = 1: record, fit, ``out/policy.safetensors``) or :func:`run_generations`."""
    if settings.generations > 1:
        return run_generations(settings, out, workers, progress)
    fit_round(settings, out, [(out, settings.games)], workers, progress)
    return out / "policy.safetensors"


def saved_so_far(settings: Settings, out: Path) -> str:
    """What a stopped run has kept, and how to go on."""
    if settings.generations == 1:
        return (f"{recorded_games(settings, out)} of {settings.games} games are saved in {out / 'chunks'}; "
                f"--resume {out} continues")
    done = sum((out / f"gen-{k}" / "gate.json").is_file() for k in range(1, settings.generations + 1))
    return (f"{done} of {settings.generations} generations are done in {out}, and what the next one saved is kept; "
            f"--resume {out} continues")


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

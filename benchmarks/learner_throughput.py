"""How fast the learner gets its steps: every env path per game × opponent, and PPO with every shipped config,
before (an older revision, measured in a temporary git worktree) and after (this checkout), in one run.

    python benchmarks/learner_throughput.py                     # everything, ~20-25 minutes on 2 cores
    python benchmarks/learner_throughput.py --out docs/performance.md --plot docs/img/performance.png
    python benchmarks/learner_throughput.py --quick             # make bench: ~2-3 minutes, no before-worktree

Env table: for each game at 2 players and its largest count, against random, heuristic and pretrained
opponents, learner steps/s (one step = one learner decision and the opponents' moves inside it) of the single env
(``gymnasium.make``), ``gymnasium.make_vec(..., vectorization_mode="sync")`` with 16 envs and the batched env (the
ids' ``vector_entry_point``) at N = 16, 64, 256, in this process and with ``--workers`` worker processes; the
learner's actions are uniformly random legal ones. Rows in this process are rates per second of its CPU time
(other work on the machine disturbs them little); rows with workers per second of wall time (they use other
processes). All decisions/s (learner and opponents) = learner steps/s × decisions per learner step, counted
(engine ``apply_action`` calls) in a separate pass of the batched env, so that counting slows no timed row.
The engine's own random-play rate is ``benchmarks/throughput.py``'s ``engine_loop``; the target ratios are
those of issue 34 (N = 64).

PPO table: each shipped PPO config (at its default player count, and the 3-5 player targets) trains
``--ppo-steps`` steps from scratch (no warm start, no evaluation during training) in a fresh process, before and
after; PPO steps/s is the steps over the wall time of ``model.learn``, split into the share of that time in
the games (the vec env's step, reset and masks, opponents excluded), in the opponents (agents' ``act``, policy
forward passes) and in the learner (everything else: SB3's rollout bookkeeping, torch forward and backward).
Anchor: sb3-contrib's MaskablePPO with its defaults on PettingZoo's connect_four (one seat, a random opponent)
and on our ids against random opponents.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import gymnasium
import numpy as np
from throughput import engine_loop

import tabletop_rl  # registers the ids tabletop/<game>-v<version> (of the tree on PYTHONPATH in a child process)
from tabletop_rl.training import cli
from tabletop_rl.training.cli.stopping import stoppable

ROOT = Path(__file__).resolve().parent.parent
CASES = [("lost_cities", 2), ("five_towers", 2), ("five_towers", 5), ("palazzo", 2), ("palazzo", 4),
         ("torres", 2), ("torres", 4)]  # 2 players and each game's largest count
OPPONENTS = ("random", "heuristic", "pretrained")
# Every shipped PPO config at its default player count, and the 3-5 player configs the target names.
PPO_RUNS = [("lost_cities", "lost_cities.yaml", None), ("lost_cities", "lost_cities_long.yaml", None),
            ("five_towers", "five_towers.yaml", None), ("five_towers", "five_towers_long.yaml", None),
            ("five_towers", "five_towers_long.yaml", 3), ("five_towers", "five_towers_long.yaml", 4),
            ("five_towers", "five_towers_long.yaml", 5), ("palazzo", "palazzo.yaml", None),
            ("torres", "torres.yaml", None), ("torres", "torres.yaml", 4)]  # (game, config, players or default)
PPO_FIXED = ["warm_start.teacher=null", "eval.every=0", "eval.final_games=2", "eval.opponents=[random]",
             "progress_bar=false", "max_minutes=60", "checkpoint_every=100000000"]
BEGIN, END = "<!-- measured: benchmarks/learner_throughput.py -->", "<!-- end measured -->"
PLOTTED = ("before single", "single", "sync 16", "batched 64", "batched 64 + {workers}")
CPU, WALL = "CPU", "wall"


@dataclass(frozen=True)
class Variant:
    """One way of stepping the learner: ``kind`` single / sync / batched, ``n`` games, ``workers`` processes."""

    kind: str
    n: int = 1
    workers: int = 0

    @property
    def label(self) -> str:
        if self.kind == "single":
            return "single"
        return f"{self.kind} {self.n}" + (f" + {plural(self.workers, 'worker')}" if self.workers else "")

    @property
    def clock(self) -> str:
        return WALL if self.workers else CPU


@dataclass
class EnvRow:
    game: str
    players: int
    opponent: str
    engine: float = float("nan")  # the engine's random-play decisions/s (CPU)
    per_step: float = float("nan")  # decisions (learner's and opponents') per learner step
    rates: dict[str, float] = field(default_factory=dict)  # variant label -> learner steps/s

    @property
    def name(self) -> str:
        return f"{self.game} {self.players}p"


# ----------------------------------------------------------------------------- stepping the learner
def game_options(game: str, players: int) -> dict:
    return {} if game == "lost_cities" else {"num_players": players}


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' * (count != 1)}"


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``masks`` (1 on the legal actions), in one numpy call."""
    return (rng.random(masks.shape) * masks).argmax(axis=-1)


def timed(step: Callable[[], int], clock: Callable[[], float], seconds: float) -> float:
    """Learner steps per second of ``clock``: ``step()`` (returning the steps it made) repeated for ``seconds``."""
    steps, start = 0, clock()
    while (elapsed := clock() - start) < seconds:
        steps += step()
    return steps / elapsed


def env_id(game: str) -> str:
    """The id ``import tabletop_rl`` registered for ``game`` (a before-tree may have no ``tabletop_rl.env_id``)."""
    return next(name for name in gymnasium.registry if name.startswith(f"tabletop/{game}-v"))


def single_rate(game: str, players: int, opponent: str, seconds: float) -> float:
    """``gymnasium.make``'s learner steps per CPU second (the code importable as ``tabletop_rl``)."""
    env = gymnasium.make(env_id(game), opponent=opponent, **game_options(game, players))
    rng = np.random.default_rng(0)
    info = env.reset(seed=0)[1]

    def step() -> int:
        nonlocal info
        _, _, terminated, truncated, info = env.step(random_legal(info["action_mask"], rng))
        if terminated or truncated:
            info = env.reset()[1]
        return 1

    rate = timed(step, time.process_time, seconds)
    env.close()
    return rate


def vector_env(game: str, players: int, opponent: str, variant: Variant) -> gymnasium.vector.VectorEnv:
    options = game_options(game, players)
    if variant.kind == "sync":  # same-step autoreset, so that every mask returned belongs to a running game
        return gymnasium.make_vec(env_id(game), num_envs=variant.n, vectorization_mode="sync",
                                  vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP},
                                  opponent=opponent, **options)
    return gymnasium.make_vec(env_id(game), num_envs=variant.n, vectorization_mode="vector_entry_point",
                              opponent=opponent, num_workers=variant.workers or None, **options)


def vector_rate(game: str, players: int, opponent: str, variant: Variant, seconds: float) -> float:
    env = vector_env(game, players, opponent, variant)
    rng = np.random.default_rng(0)
    masks = env.reset(seed=0)[1]["action_mask"]

    def step() -> int:
        nonlocal masks
        masks = env.step(random_legal(masks, rng))[4]["action_mask"]
        return variant.n

    rate = timed(step, time.process_time if variant.clock == CPU else time.perf_counter, seconds)
    env.close()
    return rate


def decisions_per_step(game: str, players: int, opponent: str, seconds: float) -> float:
    """Engine ``apply_action`` calls per learner step in the batched env. Two games only: all games start
    together, so few games played long give the whole games' mix of phases, not mostly their openings."""
    variant = Variant("batched", 2)
    env = vector_env(game, players, opponent, variant)
    rng = np.random.default_rng(1)
    masks = env.reset(seed=1)[1]["action_mask"]
    state_class = type(env.unwrapped.tables[0].state)
    applied = [0]
    with counting_calls(state_class, "apply_action", applied):
        steps = 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            masks = env.step(random_legal(masks, rng))[4]["action_mask"]
            steps += variant.n
    env.close()
    return applied[0] / steps


@contextmanager
def counting_calls(cls: type, name: str, counter: list[int]) -> Iterator[None]:
    """Count the calls of ``cls.name`` (inherited or its own) into ``counter[0]`` while the block runs."""
    own = cls.__dict__.get(name)
    method = getattr(cls, name)

    def counted(self, *args, **kwargs):
        counter[0] += 1
        return method(self, *args, **kwargs)

    setattr(cls, name, counted)
    try:
        yield
    finally:
        if own is None:
            delattr(cls, name)
        else:
            setattr(cls, name, own)


# ----------------------------------------------------------------------------- PPO, timed in a fresh process
class Clocks:
    """Wall time spent inside instrumented calls while PPO learns; a call inside another timed call of the same
    part (an agent's ``act`` running its policy's ``logits``) counts once."""

    def __init__(self):
        self.seconds = {"learn": 0.0, "env": 0.0, "opponents": 0.0}
        self.games = 0  # the learner's episodes that ended while PPO learned: its games of experience
        self.depth = {"env": 0, "opponents": 0}
        self.learning = False

    def wrap(self, part: str, function: Callable) -> Callable:
        def timed_call(*args, **kwargs):
            if not self.learning or self.depth[part]:
                return function(*args, **kwargs)
            self.depth[part] += 1
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[part] += time.perf_counter() - start
                self.depth[part] -= 1

        return timed_call


def instrument(clocks: Clocks, game) -> Callable:
    """Time MaskablePPO.learn and every opponent's decisions (class-wide); returns what times a vec env."""
    from sb3_contrib import MaskablePPO

    from tabletop_rl.envs.core.agents import RandomAgent
    from tabletop_rl.training.runtime.agents import load_agent
    from tabletop_rl.training.runtime.policy import MLPPolicy, PolicyAgent

    learn = MaskablePPO.learn

    def timed_learn(model, *args, **kwargs):
        clocks.learning, start = True, time.perf_counter()
        try:
            return learn(model, *args, **kwargs)
        finally:
            clocks.learning = False
            clocks.seconds["learn"] += time.perf_counter() - start

    MaskablePPO.learn = timed_learn
    heuristic = type(load_agent("heuristic", game))
    for cls, names in ((heuristic, ("act",)), (RandomAgent, ("act", "pick")), (PolicyAgent, ("act", "choose")),
                       (MLPPolicy, ("logits",))):
        for name in names:
            if hasattr(cls, name):
                setattr(cls, name, clocks.wrap("opponents", getattr(cls, name)))

    def time_vec_env(venv) -> bool:
        """Time the games behind the trainer's VecMonitor and count the games that end; True when its opponents
        play in this process."""
        step_wait = venv.step_wait

        def counted_step_wait():
            observations, rewards, dones, infos = step_wait()
            if clocks.learning:
                clocks.games += int(np.count_nonzero(dones))
            return observations, rewards, dones, infos

        venv.step_wait = counted_step_wait
        inner = venv.venv
        for name in ("step_wait", "reset", "env_method"):
            setattr(inner, name, clocks.wrap("env", getattr(inner, name)))
        batched = getattr(inner, "env", None)
        return type(inner).__name__ == "DummyVecEnv" or type(batched).__name__ == "SeatVectorEnv"

    return time_vec_env


def ppo_child(task: dict) -> dict:
    """One short training run of a config (in the tree this process imports), timed and split."""
    from tabletop_rl import envs
    from tabletop_rl.training.ppo.config import load_config
    from tabletop_rl.training.ppo.trainer import Trainer

    with tempfile.TemporaryDirectory() as runs:
        config = load_config(task["config"], [*PPO_FIXED, f"runs_dir={runs}", *task["set"]])
        rollout = config.num_envs * config.ppo.n_steps
        if rollout > task["steps"]:  # a shorter rollout: SB3's time per step hardly depends on its length
            config.ppo.n_steps = max(1, task["steps"] // config.num_envs)
        config.total_timesteps = task["steps"]
        game = envs.make(config.game, wrapped=False, **config.game_options).game
        clocks = Clocks()
        time_vec_env = instrument(clocks, game)
        trainer = Trainer(config)
        make_vec_env = trainer.make_vec_env
        in_process = []

        def timed_make():
            venv = make_vec_env()
            in_process.append(time_vec_env(venv))
            return venv

        trainer.make_vec_env = timed_make
        run_dir = Path(runs) / config.name
        run_dir.mkdir(parents=True)
        result = trainer.run(run_dir)
    learn, env, opponents = (clocks.seconds[k] for k in ("learn", "env", "opponents"))
    shares = ({"games": (env - opponents) / learn, "opponents": opponents / learn, "learner": 1 - env / learn}
              if in_process[0] else {"games and opponents": env / learn, "learner": 1 - env / learn})
    return {"steps_per_second": result["num_timesteps"] / learn, "games_per_second": clocks.games / learn,
            "shares": shares, "players": game.num_players,
            "env": f"{config.vec_env}, {config.num_envs} envs" + (
                f", {plural(config.num_workers, 'worker')}" if getattr(config, "num_workers", 0) else "")}


# ----------------------------------------------------------------------------- the anchor
class ConnectFourSeat(gymnasium.Env):
    """PettingZoo's connect_four as a single-agent env: the learner in a random seat, a random opponent."""

    def __init__(self):
        from pettingzoo.classic import connect_four_v3

        self.aec = connect_four_v3.env()
        self.observation_space = gymnasium.spaces.Box(0, 1, (84,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(7)
        self.seat = "player_0"

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.aec.reset(seed=int(self.np_random.integers(2**31)))
        self.seat = self.aec.agents[int(self.np_random.integers(2))]
        self._play_opponent()
        return self._observation(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.aec.step(int(action))
        self._play_opponent()
        over = any(self.aec.terminations.values()) or any(self.aec.truncations.values())
        return self._observation(), float(self.aec.rewards[self.seat]) if over else 0.0, over, False, {}

    def action_masks(self) -> np.ndarray:
        return self.aec.observe(self.seat)["action_mask"].astype(bool)

    def _play_opponent(self) -> None:
        aec = self.aec
        while aec.agent_selection != self.seat and not any(aec.terminations.values()):
            legal = np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])
            aec.step(int(self.np_random.choice(legal)))

    def _observation(self) -> np.ndarray:
        return self.aec.observe(self.seat)["observation"].reshape(-1).astype(np.float32)


def anchor_child(task: dict) -> dict:
    """sb3-contrib MaskablePPO with its defaults (MlpPolicy, one env) for ``task["steps"]`` steps on each env."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger

    torch.set_num_threads(1)  # as our trainer's torch_threads: more threads thrash on a busy machine
    rates = {}
    for game in task["games"]:
        env = ConnectFourSeat() if game == "connect_four" else gymnasium.make(
            env_id(game), opponent="random", **game_options(game, 2))
        model = MaskablePPO("MlpPolicy", env, seed=0, verbose=0)
        model.set_logger(Logger(None, []))  # SB3's silent default would leave an empty folder in /tmp at every run
        start = time.perf_counter()
        model.learn(task["steps"])
        rates[game] = model.num_timesteps / (time.perf_counter() - start)
    return rates


def single_child(task: dict) -> dict:
    """The single env's learner steps/s for every (game, players, opponent) of the task."""
    rates = {}
    for game, players, opponent in task["rows"]:
        try:
            rates[f"{game} {players} {opponent}"] = single_rate(game, players, opponent, task["seconds"])
        except Exception as error:  # an opponent this revision does not have: a gap in the table, not the end
            print(f"before: {game} {players}p {opponent}: {type(error).__name__}: {error}", file=sys.stderr)
    return rates


CHILDREN = {"ppo": ppo_child, "anchor": anchor_child, "single": single_child}


def run_child(tree: Path, task: dict) -> dict | None:
    """``task`` run by this script in a fresh process that imports ``tree``'s ``tabletop_rl``; its answer is the
    last line of its output (the trainer prints before it). None if it failed: a gap in a table, said on stderr,
    rather than the end of a long run."""
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(task)], cwd=tree,
                          env=environment, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        print(f"{task['kind']} {task.get('config', '')} in {tree} failed (exit code {done.returncode}; its errors "
              "above)", file=sys.stderr, flush=True)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


@contextmanager
def worktree(revision: str) -> Iterator[Path]:
    """A temporary detached git worktree of ``revision`` of this repository, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="learner-throughput-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), revision], check=True,
                   stdout=subprocess.DEVNULL)
    try:
        yield folder
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder)], check=False)


# ----------------------------------------------------------------------------- the measurements
class Progress:
    """One line on stderr per measurement: its number, what it measured, the figure and the time so far."""

    def __init__(self, total: int):
        self.total, self.done, self.start = total, 0, time.monotonic()

    def __call__(self, what: str, figure: str) -> None:
        self.done += 1
        print(f"[{self.done}/{self.total} {(time.monotonic() - self.start) / 60:.1f} min] {what}: {figure}",
              file=sys.stderr, flush=True)


def measure_envs(cases: list[tuple[str, int]], variants: list[Variant], seconds: float, progress: Progress,
                 ) -> list[EnvRow]:
    rows = []
    for game, players in cases:
        engine = engine_loop(tabletop_rl.game_class(game)(**game_options(game, players)), seconds)
        progress(f"{game} {players}p engine", f"{engine:,.0f} random decisions/s (CPU)")
        for opponent in OPPONENTS:
            row = EnvRow(game, players, opponent, engine)
            row.per_step = decisions_per_step(game, players, opponent, seconds)
            progress(f"{row.name} {opponent} counted", f"{row.per_step:.2f} decisions per learner step")
            for variant in variants:
                rate = (single_rate(game, players, opponent, seconds) if variant.kind == "single"
                        else vector_rate(game, players, opponent, variant, seconds))
                row.rates[variant.label] = rate
                progress(f"{row.name} {opponent} {variant.label}", f"{rate:,.0f} learner steps/s ({variant.clock})")
            rows.append(row)
    return rows


def measure_before_singles(tree: Path, rows: list[EnvRow], seconds: float, progress: Progress) -> None:
    rates = run_child(tree, {"kind": "single", "seconds": seconds,
                             "rows": [(r.game, r.players, r.opponent) for r in rows]}) or {}
    for row in rows:
        rate = rates.get(f"{row.game} {row.players} {row.opponent}")
        if rate is not None:
            row.rates["before single"] = rate
    progress("before: single env, every game × opponent", f"{len(rates)} rows")


def ppo_task(tree: Path, config: str, players: int | None, steps: int, overrides: list[str]) -> dict:
    players_set = [f"game_options.num_players={players}"] if players else []
    return {"kind": "ppo", "config": str(tree / "configs" / config), "steps": steps,
            "set": players_set + overrides}


def measure_ppo(runs: list[tuple[str, str, int | None]], before: Path | None, steps: int, overrides: list[str],
                progress: Progress) -> list[dict]:
    rows = []
    for _, config, players in runs:
        row = {"config": config, "players": players}
        for when, tree, extra in (("before", before, []), ("after", ROOT, overrides)):
            if tree is None:
                continue
            result = row[when] = run_child(tree, ppo_task(tree, config, players, steps, extra))
            row["players"] = result["players"] if result else players or "default"
            progress(f"PPO {config} {row['players']}p {when}", "failed" if result is None else
                     f"{result['steps_per_second']:,.0f} steps/s ({result['env']}; {shares(result)})")
        rows.append(row)
    return rows


def measure_anchor(games: list[str], steps: int, progress: Progress) -> dict[str, float]:
    """The anchor runs, all in one fresh process (they share nothing but torch's start-up)."""
    rates = run_child(ROOT, {"kind": "anchor", "games": ["connect_four", *games], "steps": steps}) or {}
    progress("anchor: MaskablePPO's defaults", ", ".join(f"{g} {r:,.0f}" for g, r in rates.items()) + " steps/s")
    return rates


# ----------------------------------------------------------------------------- tables and the plot
def number(value: float | None) -> str:
    return "—" if value is None or value != value else f"{value:,.0f}"


def ratio(value: float | None) -> str:
    return "—" if value is None or value != value else f"{value:.2f}"


def markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def env_tables(rows: list[EnvRow], variants: list[Variant]) -> str:
    labels = (["before single"] if any("before single" in r.rates for r in rows) else []) + [
        v.label for v in variants]
    clocks = {v.label: v.clock for v in variants} | {"before single": CPU}
    head = ["game", "opponent"]
    steps = markdown(head + [f"{label} ({clocks[label]})" for label in labels],
                     [[r.name, r.opponent] + [number(r.rates.get(label)) for label in labels] for r in rows])
    decisions = markdown(
        head + ["engine random play (CPU)", "decisions per learner step"] + [
            f"{label} ({clocks[label]})" for label in labels],
        [[r.name, r.opponent, number(r.engine), f"{r.per_step:.2f}"]
         + [number(r.rates.get(label, float("nan")) * r.per_step) for label in labels] for r in rows])
    return ("**Learner steps/s** (one learner decision and the opponents' moves inside the step):\n\n" + steps
            + "\n\n**All decisions/s** (learner and opponents):\n\n" + decisions)


def target_table(rows: list[EnvRow]) -> str:
    """Issue 34's env targets at N = 64: against the single env before, and today's (in brackets when there are
    before-rows)."""
    by = {(r.name, r.opponent): r for r in rows}
    before = any("before single" in r.rates for r in rows)

    def against_single(row: EnvRow) -> str:
        today = ratio(row.rates["batched 64"] / row.rates["single"])
        return f"{ratio(row.rates['batched 64'] / row.rates['before single'])} [{today}]" if before else today

    table = []
    for name in dict.fromkeys(r.name for r in rows):
        random_row = by[(name, "random")]
        table.append([name, ratio(random_row.rates["batched 64"] * random_row.per_step / random_row.engine),
                      against_single(by[(name, "heuristic")]), against_single(by[(name, "pretrained")])])
    single = "the single env before [today's]" if before else "today's single env"
    return (f"**Targets at N = 64** (batched 64 in this process; learner steps/s × {single}):\n\n"
            + markdown(["game", "vs random: decisions/s ÷ engine (≥ 0.75)", "vs heuristic: × single (≥ 5)",
                        "vs pretrained: × single (≥ 10)"], table))


def shares(result: dict | None) -> str:
    return "—" if result is None else ", ".join(f"{k} {v:.0%}" for k, v in result["shares"].items())


def ppo_table(rows: list[dict]) -> str:
    def rate(result: dict | None, unit: str = "steps") -> float | None:
        return result and result[f"{unit}_per_second"]

    def games(result: dict | None) -> str:
        value = rate(result, "games")  # 0 when no game ended (--quick's runs are shorter than a game)
        return f"{value:,.1f}" if value else "—"

    before = any("before" in row for row in rows)
    table = []
    for row in rows:
        after = row["after"]
        cells = [row["config"], f"{row['players']}", after["env"] if after else "—"]
        if before:
            gains = [rate(after, unit) / rate(row["before"], unit) if row["before"] and after else None
                     for unit in ("games", "steps")]
            cells += [games(row["before"]), games(after), ratio(gains[0]), number(rate(row["before"])),
                      number(rate(after)), ratio(gains[1]), shares(after), shares(row["before"])]
        else:
            cells += [games(after), number(rate(after)), shares(after)]
        table.append(cells)
    header = (["config", "players", "env after", "games/s before", "games/s after", "× before", "steps/s before",
               "steps/s after", "× before", "after: time in", "before: time in"]
              if before else ["config", "players", "env", "games/s", "PPO steps/s", "time in"])
    return ("**PPO games of experience per second** (the learner's training games that ended, over the wall time "
            "of `model.learn`), PPO steps/s, and the share of that time in the games, the opponents and the "
            "learner; targets: games/s after ≥ 2× before, ≥ 3× for Five Towers at 3–5 players:\n\n"
            + markdown(header, table))


def anchor_table(rates: dict[str, float]) -> str:
    return ("**Anchor**: sb3-contrib MaskablePPO, its defaults (`MlpPolicy`, one env), random opponent:\n\n"
            + markdown(["env", "PPO steps/s", "× connect_four"],
                       [[("PettingZoo connect_four_v3" if game == "connect_four" else f"{env_id(game)} (2p)"),
                         number(rate), ratio(rate / rates["connect_four"])] for game, rate in rates.items()]))


def plot(rows: list[EnvRow], workers: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [label.format(workers=plural(workers, "worker")) for label in PLOTTED]
    labels = [label for label in labels if any(label in r.rates for r in rows)]
    x = np.arange(len(rows))
    width = 0.8 / len(labels)
    figure, axes = plt.subplots(figsize=(max(8, 0.75 * len(rows)), 5))
    for i, label in enumerate(labels):
        axes.bar(x + (i - (len(labels) - 1) / 2) * width, [r.rates.get(label, np.nan) for r in rows], width,
                 label=label)
    axes.set_yscale("log")
    axes.set_ylabel("learner steps/s (random legal actions)")
    axes.set_title("Learner steps/s per CPU second of the process; with workers per wall second", fontsize=9)
    axes.set_xticks(x, [f"{r.name} {r.opponent}" for r in rows], fontsize=8, rotation=35, ha="right")
    axes.legend(fontsize=8)
    axes.grid(axis="y", which="both", alpha=0.3)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)


def write_between_markers(path: Path, text: str) -> None:
    document = path.read_text()
    head, begin, rest = document.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise SystemExit(f"{path} has no '{BEGIN}' ... '{END}' block to write the tables into")
    path.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}")


def machine(load: tuple[float, ...], seconds: float, args: argparse.Namespace, before: str | None) -> str:
    revision = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
    return (f"Measured {time.strftime('%Y-%m-%d %H:%M')} on {os.cpu_count()} cores at revision {revision or '?'}"
            + (f" against {before}" if before else "") + f"; {seconds:g} s per env measurement, "
            f"{args.ppo_steps:,} steps per PPO run; load average {load[0]:.1f} at the start, "
            f"{os.getloadavg()[0]:.1f} at the end.")


# ----------------------------------------------------------------------------- the command line
def variants_for(quick: bool, workers: int) -> list[Variant]:
    sizes = (64,) if quick else (16, 64, 256)
    return ([Variant("single"), Variant("sync", 16)] + [Variant("batched", n) for n in sizes]
            + [Variant("batched", n, workers) for n in sizes])


def estimate_minutes(parts: list[str], cases: list, runs: list, variants: list[Variant], seconds: float,
                     before: bool, args: argparse.Namespace) -> float:
    """Rough, from runs on a busy 2-core machine: the timed seconds, half a second to build each env (1.5 s with
    workers), 10 s to start each PPO or anchor process, PPO at ~300 steps/s and the anchor at ~400."""
    combos = len(cases) * len(OPPONENTS)
    seconds_in = {
        "envs": len(cases) * seconds + combos * ((len(variants) + 1) * seconds + before * (seconds + 0.5)
                                                 + sum(1.5 if v.workers else 0.5 for v in variants)),
        "ppo": len(runs) * (1 + before) * (10 + args.ppo_steps / 300),
        "anchor": 10 + (1 + len(args.games)) * args.anchor_steps / 400}
    return sum(seconds_in[part] for part in parts) / 60


def positive(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text}")
    return value


def main() -> int:
    parser = cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="short measurements, N = 64 only, no before-worktree (what make bench runs)")
    parser.add_argument("--seconds", type=positive, help="time per env measurement (default 2, --quick 0.25)")
    parser.add_argument("--workers", type=cli.count, default=2, metavar="K",
                        help="worker processes of the batched rows with workers (default 2)")
    parser.add_argument("--before", default="535f3cd", metavar="REV",
                        help="the revision measured as 'before' in a temporary worktree (default 535f3cd)")
    parser.add_argument("--ppo-steps", type=cli.count, help="steps per PPO run "
                        "(default 8192, --quick 1024; rollouts of a config shortened to fit)")
    parser.add_argument("--anchor-steps", type=cli.count,
                        help="steps per anchor run (default 4096: two rollouts; --quick 2048)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a config override for every 'after' PPO run, e.g. --set vec_env=batched (repeatable)")
    parser.add_argument("--games", nargs="+", choices=tabletop_rl.list_games(), default=tabletop_rl.list_games(),
                        help="measure only these games (default: all four)")
    parser.add_argument("--skip", action="append", default=[], choices=("envs", "ppo", "anchor"),
                        help="leave a part out (repeatable)")
    parser.add_argument("--out", type=Path, help=f"write the tables into this Markdown file between {BEGIN} "
                        f"and {END}")
    parser.add_argument("--plot", type=Path, help="write the learner steps/s plot to this PNG file")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # a measurement in a fresh process: run_child
    args = parser.parse_args()
    if args.child:
        task = json.loads(args.child)
        from tabletop_rl.training.runtime.policy import limit_blas_threads

        limit_blas_threads(1)
        print(json.dumps(CHILDREN[task["kind"]](task)), flush=True)
        return 0
    if args.out is not None and BEGIN not in (args.out.read_text() if args.out.is_file() else ""):
        parser.error(f"--out {args.out}: the file must exist and hold a {BEGIN} ... {END} block")
    if args.plot is not None and "envs" in args.skip:
        parser.error("--plot draws the env table: do not --skip envs")
    seconds = args.seconds or (0.25 if args.quick else 2.0)
    args.ppo_steps = args.ppo_steps or (1024 if args.quick else 8192)
    args.anchor_steps = args.anchor_steps or (2048 if args.quick else 4096)
    before = None if args.quick else args.before
    if before and subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{before}^{{commit}}"],
                                 stdout=subprocess.DEVNULL).returncode != 0:
        parser.error(f"--before {before}: no such revision in {ROOT} (a full clone is needed; or run --quick)")
    cases = [case for case in CASES if case[0] in args.games]
    runs = [run for run in PPO_RUNS if run[0] in args.games]

    from tabletop_rl.training.runtime.policy import limit_blas_threads

    limit_blas_threads(1)  # BLAS threads spin on a busy 2-core machine
    load = os.getloadavg()
    variants = variants_for(args.quick, args.workers)
    parts = [part for part in ("envs", "ppo", "anchor") if part not in args.skip]
    minutes = estimate_minutes(parts, cases, runs, variants, seconds, bool(before), args)
    print(f"about {minutes:.0f} minutes on 2 cores "
          f"(load average now {load[0]:.1f})", file=sys.stderr, flush=True)
    total = (("envs" in parts) * (len(cases) * (1 + len(OPPONENTS) * (1 + len(variants))) + bool(before))
             + ("ppo" in parts) * len(runs) * (1 + bool(before)) + ("anchor" in parts))
    progress = Progress(total)
    sections = []
    with worktree(before) if before else nullcontext() as tree:
        if "envs" in parts:
            rows = measure_envs(cases, variants, seconds, progress)
            if tree is not None:
                measure_before_singles(tree, rows, seconds, progress)
            sections += [env_tables(rows, variants), target_table(rows)]
            if args.plot is not None:
                plot(rows, args.workers, args.plot)
        if "ppo" in parts:
            sections.append(ppo_table(measure_ppo(runs, tree, args.ppo_steps, args.set, progress)))
    if "anchor" in parts:
        sections.append(anchor_table(measure_anchor(args.games, args.anchor_steps, progress)))
    text = "\n\n".join([machine(load, seconds, args, before), *sections])
    print(text)
    if args.out is not None:
        write_between_markers(args.out, text)
    return 0


if __name__ == "__main__":
    # A stop signal unwinds like Ctrl-C: the running measurement's process is killed, the worktree removed.
    with stoppable("learner_throughput", lambda: "nothing was written"):
        sys.exit(main())

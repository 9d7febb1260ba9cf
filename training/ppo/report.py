"""A training run's evaluation records and its end-of-run report: ``report.md``, ``learning_curve.png``, a summary.

An evaluation record (one per opponent and evaluation step, kept in ``eval_history.json``)::

    {"step": 200000, "opponent": "heuristic", "games": 200,
     "win_rate": 0.61, "ci": [0.54, 0.67],                 # wins (ties count 1/k), Wilson 95% interval
     "per_seat": [{"seat": 0, "games": 100, "win_rate": ..., "ci": [...]}, ...],
     "margin": 4.2, "margin_ci": 2.9}                      # own score − mean of the others' per round, ± 95% t
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ...envs.core.game import Game
from ..cli import set_flags
from ..evaluation.stats import mean_interval, wilson
from ..runtime.policy_paths import fitting_pretrained, non_default_options
from ..runtime.printed_commands import command


def summarise(step: int, opponent: str, seats: Sequence[int], wins: Sequence[float],
              margins: Sequence[float] | None, num_players: int) -> dict[str, Any]:
    """One evaluation record from per-game results (learner seat, win share, score margin)."""
    seats, wins = np.asarray(seats), np.asarray(wins, float)
    per_seat = []
    for s in range(num_players):
        w = wilson(wins[seats == s])
        per_seat.append({"seat": s, "games": w.n, "win_rate": w.mean if w.n else 0.0,
                         "ci": [w.low, w.high] if w.n else [0.0, 1.0]})
    w = wilson(wins)
    record = {"step": int(step), "opponent": opponent, "games": w.n, "win_rate": w.mean, "ci": [w.low, w.high],
              "per_seat": per_seat, "margin": None, "margin_ci": None}
    if margins is not None and len(margins):
        m = mean_interval(margins)
        record["margin"] = m.mean
        record["margin_ci"] = (m.high - m.low) / 2 if m.n > 1 else float("inf")
    return record


def describe(record: dict[str, Any]) -> str:
    """One line, e.g. ``vs heuristic: win 61.0% [54.0, 67.0] (seat 0 60%, seat 1 62%), margin +4.2 ± 2.9``."""
    lo, hi = record["ci"]
    seats = ", ".join(f"seat {s['seat']} {100 * s['win_rate']:.0f}%" for s in record["per_seat"])
    text = (f"vs {record['opponent']}: win {100 * record['win_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] "
            f"({seats}) over {record['games']} games")
    if record["margin"] is not None:
        text += f", margin {record['margin']:+.1f} ± {record['margin_ci']:.1f}"
    return text


def plot_learning_curve(history: list[dict[str, Any]], path: Path, title: str) -> None:
    """Win rate (with its 95% band) and score margin against each evaluation opponent, over steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_win, ax_margin) = plt.subplots(1, 2, figsize=(11, 4))
    for opponent in dict.fromkeys(r["opponent"] for r in history):
        rows = sorted((r for r in history if r["opponent"] == opponent), key=lambda r: r["step"])
        steps = [r["step"] for r in rows]
        line, = ax_win.plot(steps, [r["win_rate"] for r in rows], marker=".", label=f"vs {opponent}")
        ax_win.fill_between(steps, [r["ci"][0] for r in rows], [r["ci"][1] for r in rows],
                            color=line.get_color(), alpha=0.2)
        if all(r["margin"] is not None for r in rows):
            ax_margin.plot(steps, [r["margin"] for r in rows], marker=".", label=f"vs {opponent}")
    ax_win.set(xlabel="environment steps", ylabel="win rate (95% interval)", ylim=(0, 1), title="win rate")
    ax_margin.set(xlabel="environment steps", ylabel="score margin per round", title="mean score margin")
    ax_margin.axhline(0, color="grey", lw=0.8)
    for ax in (ax_win, ax_margin):
        ax.grid(alpha=0.3)
        ax.legend(loc="best")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def next_steps(game: Game, run_dir: Path, policy: Path, steps: int, finished: bool) -> list[tuple[str, str]]:
    """What to run after a training run, with its actual paths and the game's options: (what, shell command)
    pairs. A run that reached its ``total_timesteps`` (``finished``) is extended by raising it; any other just
    continues. The shipped policy joins the evaluation where one was trained for the run's options."""
    options = set_flags(non_default_options(game, game.options))
    others = ["random", "heuristic"] + (["pretrained"] if fitting_pretrained(game) else [])
    extend = ["--set", f"total_timesteps={2 * steps}"] if finished else []
    return [("play against it", command("tabletop_rl.training.play", game.name, "--opponent", policy, *options)),
            ("evaluate it", command("tabletop_rl.training.evaluate", game.name, policy, *others, "--games", "400",
                                    *options)),
            ("train it further" if finished else "continue it",
             command("tabletop_rl.training.train", "--resume", run_dir, *extend)),
            ("TensorBoard", command("tensorboard.main", "--logdir", run_dir / "tb"))]


def write_report(run_dir: Path, game: Game, config: dict[str, Any], history: list[dict[str, Any]],
                 final: list[dict[str, Any]], facts: dict[str, Any]) -> Path:
    """``report.md`` and ``learning_curve.png`` in ``run_dir`` for a run of ``game`` (the config's game and
    options); returns the report's path."""
    curve = run_dir / "learning_curve.png"
    if history:
        plot_learning_curve(history, curve, f"{config['name']} ({config['game']})")
    lines = [f"# Training report: {config['name']}", "",
             f"Game `{config['game']}` with options `{config['game_options'] or {}}`; "
             f"{facts['num_timesteps']:,} environment steps, {facts['games']:,} games of experience, in "
             f"{facts['minutes']:.1f} minutes ({facts['steps_per_second']:.0f} PPO steps/s, "
             f"{facts['games_per_second']:.1f} games/s, {facts['n_envs']} envs). {facts['status']}", ""]
    if final:
        games = final[0]["games"]
        lines += [f"## Final evaluation ({games} seat-balanced games per opponent, deterministic policy)", "",
                  "| Opponent | Games | Win rate [95% CI] | Per learner seat [95% CI] | Margin per round (± 95%) |",
                  "|---|---|---|---|---|"]
        for r in final:
            seats = ", ".join(f"{s['seat']}: {100 * s['win_rate']:.1f}% [{100 * s['ci'][0]:.0f}, "
                              f"{100 * s['ci'][1]:.0f}]" for s in r["per_seat"])
            margin = "n/a" if r["margin"] is None else f"{r['margin']:+.2f} ± {r['margin_ci']:.2f}"
            lines.append(f"| {r['opponent']} | {r['games']} | {100 * r['win_rate']:.1f}% "
                         f"[{100 * r['ci'][0]:.1f}, {100 * r['ci'][1]:.1f}] | {seats} | {margin} |")
        lines += ["", "Wins count a tie for first among k players as 1/k. Margin: own score minus the mean "
                  "of the other seats' scores, divided by the number of rounds in the match.", ""]
    if history:
        opponents = list(dict.fromkeys(r["opponent"] for r in history))
        lines += ["## Learning curve", "", "![learning curve](learning_curve.png)", "",
                  "Win rate (margin per round) at each evaluation; each plays the first games of the same "
                  "seeded deals, so rows with more games also cover other deals:", "",
                  "| Step | Games | " + " | ".join(f"vs {o}" for o in opponents) + " |",
                  "|---|---|" + "---|" * len(opponents)]
        for step in sorted({r["step"] for r in history}):
            records = [r for r in history if r["step"] == step]
            cells = [f"{100 * r['win_rate']:.0f}%" + ("" if r["margin"] is None else f" ({r['margin']:+.1f})")
                     for r in records]
            lines.append(f"| {step:,} | {records[0]['games']} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## Files", "", f"- run folder: `{run_dir}`", f"- policy: `{facts['policy']}`",
              f"- checkpoints: `{run_dir / 'checkpoints'}`", "", "## Next", ""]
    lines += [f"- {what}: `{command}`" for what, command in
              next_steps(game, run_dir, facts["policy"], facts["num_timesteps"], facts["finished"])]
    lines += ["", "## Config", "", "```yaml", yaml.safe_dump(config, sort_keys=False).rstrip(), "```", ""]
    path = run_dir / "report.md"
    path.write_text("\n".join(lines))
    return path

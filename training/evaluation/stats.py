"""The statistics of evaluations: means with 95 % intervals (Wilson for win rates, Student's t for margins)
and ratings (Bradley–Terry, OpenSkill). Used by the tournament and by the training runs' evaluations."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .tournament import GameRecord

Z95 = 1.959963984540054
ELO_BASE, ELO_SCALE = 1500.0, 400.0 / math.log(10)


@dataclass(frozen=True)
class Estimate:
    """A mean with its 95 % interval over ``n`` samples (``nan`` when undefined)."""

    mean: float
    low: float
    high: float
    n: int

    def text(self, percent: bool = False, digits: int = 1, signed: bool = False) -> str:
        """``mean [low, high]``; ``percent``: ×100 with a % sign; ``signed``: every number with its sign, as a
        difference is shown (``+1.2 [-0.3, +2.7]``)."""
        if self.n == 0 or math.isnan(self.mean):
            return "—"
        k = 100 if percent else 1
        unit = "%" if percent else ""
        form = f"{'+' if signed else ''}.{digits}f"
        if math.isnan(self.low):
            return f"{k * self.mean:{form}}{unit}"
        return f"{k * self.mean:{form}}{unit} [{k * self.low:{form}}, {k * self.high:{form}}]"

    def scaled(self, k: float) -> Estimate:
        """The same estimate in other units (``scaled(100)``: a share in points)."""
        return Estimate(k * self.mean, k * self.low, k * self.high, self.n)


def wilson(samples: Sequence[float]) -> Estimate:
    """Mean of outcomes in [0, 1] (draws as ½) with the 95 % Wilson score interval (well-behaved near 0 and 1,
    unlike the normal one)."""
    n = len(samples)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    p = float(np.mean(samples))
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
    return Estimate(p, max(0.0, centre - half), min(1.0, centre + half), n)


def t_quantile_975(dof: int) -> float:
    """97.5 % quantile of Student's t: exact for 1 and 2 dof, then a Cornish–Fisher expansion (< 1 % off)."""
    if dof == 1:
        return math.tan(math.pi * 0.475)
    if dof == 2:
        return 0.95 * math.sqrt(2 / (1 - 0.95**2))
    z = Z95
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    return z + g1 / dof + g2 / dof**2 + g3 / dof**3


def mean_interval(samples: Sequence[float]) -> Estimate:
    """Sample mean with the 95 % t interval (no interval below two samples)."""
    n = len(samples)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    m = float(np.mean(samples))
    if n < 2:
        return Estimate(m, math.nan, math.nan, n)
    half = t_quantile_975(n - 1) * float(np.std(samples, ddof=1)) / math.sqrt(n)
    return Estimate(m, m - half, m + half, n)


@dataclass(frozen=True)
class Rating:
    agent: str
    value: float
    low: float
    high: float


def bradley_terry(points: np.ndarray, games: np.ndarray, prior: float = 1.0) -> list[tuple[float, float]]:
    """Bradley–Terry strengths from pairwise results, as (Elo, 95 % half-width) per agent.

    ``points[i, j]`` is what i scored against j (wins + ½ draws) in ``games[i, j]`` games. Every pair that
    met gets ``prior`` virtual drawn games, so an agent that never lost still has a finite rating. The fit
    is Hunter's MM iteration; the interval comes from the inverse Fisher information (mean-zero gauge).
    """
    met = games > 0
    w = points + prior / 2 * met
    n = games + prior * met
    p = np.ones(len(points))
    for _ in range(100_000):
        new = w.sum(axis=1) / (n / (p[:, None] + p[None, :])).sum(axis=1)
        new /= np.exp(np.log(new).mean())
        done = np.max(np.abs(new - p)) < 1e-12
        p = new
        if done:
            break
    q = p[:, None] / (p[:, None] + p[None, :])
    info = n * q * q.T
    cov = np.linalg.pinv(np.diag(info.sum(axis=1)) - info)
    elo = ELO_BASE + ELO_SCALE * np.log(p)
    half = Z95 * ELO_SCALE * np.sqrt(np.clip(np.diag(cov), 0, None))
    return list(zip(elo.tolist(), half.tolist(), strict=True))


def openskill_ratings(records: Iterable[GameRecord], num_agents: int) -> list[tuple[float, float]]:
    """OpenSkill Plackett–Luce (μ, σ) per agent, updated game by game in the order played.

    An agent seated several times in one game moves by the mean of its seats' updates."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating() for _ in range(num_agents)]
    for rec in records:
        new = model.rate([[ratings[a]] for a in rec.seating], scores=list(rec.returns))
        for a in set(rec.seating):
            seats = [s for s, b in enumerate(rec.seating) if b == a]
            mu = ratings[a].mu + float(np.mean([new[s][0].mu - ratings[a].mu for s in seats]))
            sigma = float(np.mean([new[s][0].sigma for s in seats]))
            ratings[a] = model.rating(mu=mu, sigma=sigma)
    return [(r.mu, r.sigma) for r in ratings]

"""benchmarks/shipped_agents.py: the table of the shipped policies (docs/training.md, "Shipped policies")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "shipped_agents.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def test_one_row_per_policy_and_opponent_and_a_mistyped_name_in_one_line():
    done = run("--only", "five_towers_3p", "--opponents", "random", "heuristic", "--games", "3")
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| Five Towers | 3 |")]
    assert [row.split(" | ")[2] for row in rows] == ["random", "heuristic"]
    assert all("3 (1) |" in row and "(33 %)" in row for row in rows)  # one deal in its three seat rotations
    refused = run("--only", "five_towers_9p")
    assert refused.returncode == 2 and "no such shipped policy; shipped: five_towers_2p" in refused.stderr

"""benchmarks/behaviour_digest.py: the fingerprint that proves a refactoring changed no behaviour."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "behaviour_digest.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--games", "1", "--positions", "8", *args],
                          capture_output=True, text=True, timeout=300)


def test_records_then_finds_the_same_and_reports_a_change(tmp_path):
    out = tmp_path / "before"
    assert run("--out", str(out)).returncode == 0
    assert run("--out", str(out)).returncode == 2  # never overwrites a recording
    same = run("--against", str(out))
    assert same.returncode == 0 and same.stdout.strip().endswith("identical"), same.stdout + same.stderr

    stored = dict(np.load(out / "policies.npz"))
    stored["lost_cities_2p/probabilities"] = stored["lost_cities_2p/probabilities"] + 1e-5
    np.savez_compressed(out / "policies.npz", **stored)
    changed = run("--against", str(out))
    assert changed.returncode == 1
    assert "lost_cities_2p policy: largest probability difference 1.00e-05" in changed.stdout

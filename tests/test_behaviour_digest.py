"""benchmarks/behaviour_digest.py: the fingerprint that proves a refactoring changed no behaviour."""

from __future__ import annotations

import json
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


def test_a_tolerance_admits_policies_changed_on_purpose_but_no_other_difference(tmp_path):
    """The float16 policies were measured against their float32 originals with --tolerance 5e-3 (docs/training.md,
    "Policy files"): probabilities within it pass; a larger change, or any changed hash, still does not."""
    out = tmp_path / "before"
    assert run("--out", str(out)).returncode == 0
    stored = dict(np.load(out / "policies.npz"))
    probabilities = stored["torres_2p/probabilities"]
    stored["torres_2p/probabilities"] = probabilities + 4e-3 * (probabilities > 0)
    np.savez_compressed(out / "policies.npz", **stored)
    within = run("--against", str(out), "--tolerance", "5e-3")
    assert within.returncode == 0, within.stdout + within.stderr
    assert within.stdout.strip().endswith("identical hashes, probabilities within 0.005")

    stored["torres_2p/probabilities"] = probabilities + 6e-3 * (probabilities > 0)
    np.savez_compressed(out / "policies.npz", **stored)
    digest = json.loads((out / "digest.json").read_text())
    key = next(iter(digest))
    digest[key][0] = "0" * 64
    (out / "digest.json").write_text(json.dumps(digest))
    beyond = run("--against", str(out), "--tolerance", "5e-3")
    assert beyond.returncode == 1 and f"DIFFERS: {key}" in beyond.stdout
    assert beyond.stdout.strip().endswith("2 difference(s)")  # the hash and torres_2p's 6e-3

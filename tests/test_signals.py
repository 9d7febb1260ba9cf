"""A stopped command ends its worker processes, says so in one line, exits with the shell's code and leaves
no half-written file: SIGTERM sent to the command (as ``kill`` does), Ctrl-C and a hang-up sent to its whole
process group (as a terminal does). Each command is started for real, stopped once its workers are at work."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import numpy as np
import pytest

from tabletop_rl.envs.core.files import atomic_write
from tests.process_helpers import default_signals
from tests.test_training import tiny_config

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="lists child processes in /proc")


def descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            try:
                children = {int(c) for c in (task / "children").read_text().split()}
            except OSError:  # the process has just ended
                continue
            found |= children
            todo += children
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"  # an orphan that has ended but not been reaped yet is gone


def stop(tmp_path: Path, command: list[str], processes: int, signum: int, group: bool = False,
         ready: Callable[[], bool] = lambda: True) -> tuple[int, str]:
    """Start ``python <command>`` in ``tmp_path``; once it has ``processes`` descendants (resource tracker,
    forkserver and workers) and is ``ready``, send it ``signum``; its exit code and stderr once it and every
    descendant ended."""
    with open(tmp_path / "stderr", "w") as err:
        process = subprocess.Popen([sys.executable, *command], cwd=tmp_path, stdout=subprocess.DEVNULL,
                                   stderr=err, env={**os.environ, "PYTHONPATH": str(ROOT)},
                                   start_new_session=True, preexec_fn=default_signals)
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while len(seen := seen | descendants(process.pid)) < processes or not ready():
            assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "stderr").read_text()
            time.sleep(0.05)
        time.sleep(0.5)  # the workers are at work
        seen |= descendants(process.pid)
        (os.killpg if group else os.kill)(process.pid, signum)
        code = process.wait(timeout=30)
        deadline = time.monotonic() + 5
        while any(map(alive, seen)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in seen if alive(pid)], "worker processes survived the command"
    finally:  # only the processes this test started
        if process.poll() is None:
            process.kill()
        for pid in filter(alive, seen):
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    return code, (tmp_path / "stderr").read_text()


def one_line(stderr: str, name: str, prefix: str) -> str:
    """The one line on stderr, which says that the command was stopped and by what."""
    assert stderr.endswith("\n") and stderr.count("\n") == 1 and stderr.startswith(f"{prefix}: stopped by {name}; "), \
        stderr
    return stderr.rstrip("\n")


@pytest.mark.parametrize("signum, group, after_a_chunk", [(signal.SIGTERM, False, True), (signal.SIGINT, True, False),
                                                          (signal.SIGHUP, True, False)],
                         ids=["SIGTERM", "Ctrl-C", "hang-up"])
def test_expert_iteration_stops_its_workers_and_keeps_whole_chunks(tmp_path, signum, group, after_a_chunk):
    """SIGTERM comes once the first chunk is saved, while the next ones are being played (a search as cheap as
    can be: a chunk still takes seconds)."""
    out = tmp_path / "ei"
    code, stderr = stop(tmp_path, ["-m", "tabletop_rl.training.expert_iteration", "lost_cities", "--games", "400",
                                   "--workers", "2", "--search", "worlds=1,k=1,horizon=1,rollout=random",
                                   "--out", str(out), "--quiet"],
                        processes=4, signum=signum, group=group,
                        ready=lambda: not after_a_chunk or (out / "chunks" / "chunk_00000.npz").exists())
    assert code == 128 + signum
    prog, name = "python -m tabletop_rl.training.expert_iteration", signal.Signals(signum).name
    chunks = sorted((out / "chunks").iterdir())
    assert one_line(stderr, name, prog).endswith(f"; {20 * len(chunks)} of 400 games are saved in {out / 'chunks'}; "
                                                 f"--resume {out} continues")
    assert len(chunks) >= after_a_chunk and not list(out.rglob("*.tmp"))
    for chunk in chunks:
        with np.load(chunk) as data:
            assert len(data["margins"]) == 20


@pytest.mark.parametrize("record", [False, True], ids=["plain", "--record"])
def test_evaluate_stops_its_workers(tmp_path, record):
    """With ``--record``, the records of the games played are kept (SIGTERM comes once there is one)."""
    records = tmp_path / "records"
    code, stderr = stop(tmp_path, ["-m", "tabletop_rl.training.evaluate", "lost_cities", "heuristic", "random",
                                   "--games", "20000", "--workers", "2", "--quiet",
                                   *(["--record", str(records)] if record else [])], processes=3,
                        signum=signal.SIGTERM, ready=lambda: not record or any(records.glob("*.json")))
    assert code == 143
    kept = "nothing written:" if not record else \
        f"the records of the {len(list(records.iterdir()))} games played are in {records};"
    assert one_line(stderr, "SIGTERM", "python -m tabletop_rl.training.evaluate").endswith(
        f"; {kept} a tournament writes its results when it ends")
    assert not (tmp_path / "runs").exists() and not list(records.glob("*.tmp"))


def test_train_stops_its_warm_start_workers(tmp_path):
    args = tiny_config(tmp_path, "lost_cities", vec_env="dummy",
                       warm_start={"teacher": "heuristic", "games": 20000, "workers": 2})
    code, stderr = stop(tmp_path, ["-m", "tabletop_rl.training.train", *args], processes=4, signum=signal.SIGTERM)
    assert code == 143
    run = tmp_path / "runs" / "lost_cities"
    assert one_line(stderr, "SIGTERM", "lost_cities").endswith(
        f"--resume {run} starts the run again: nothing is saved before the first checkpoint (a warm start is not "
        "kept)")
    assert sorted(p.name for p in run.iterdir()) == ["config.yaml"]


def test_an_interrupted_atomic_write_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    path = tmp_path / "chunk.npz"
    path.write_bytes(b"before")

    def interrupted(self, target):
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, b"after")
    assert path.read_bytes() == b"before" and sorted(tmp_path.iterdir()) == [path]

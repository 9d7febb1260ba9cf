"""The batched vector env with workers survives what users do: a script that ends, raises, exits or gets one Ctrl-C
with a live env exits within seconds and leaves no process; a worker that is killed, stopped or whose opponent
raises is one line, never an OS error or a hang; an interrupted step leaves an env that refuses every call but
reset and close, and whose reset deals the games of a fresh env. Real workers, killed, stopped and interrupted."""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import gymnasium
import numpy as np
import pytest

from tabletop_rl import env_id
from tests.process_helpers import default_signals

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process groups from /proc")

SCRIPT = """
import sys, gymnasium, tabletop_rl
if __name__ == "__main__":
    envs = gymnasium.make_vec("tabletop/lost_cities-v0", num_envs=6, num_workers=2, opponent="heuristic")
    envs.reset(seed=0)
    envs.step(envs.unwrapped.action_masks().argmax(1))
    print("ready", flush=True)
    how = sys.argv[1]
    if how == "raise":
        raise RuntimeError("a bug in the training loop")
    if how == "exit":
        sys.exit(3)
    while how == "loop":  # until Ctrl-C
        envs.step(envs.unwrapped.action_masks().argmax(1))
"""

# A custom opponent that raises while the file FAIL exists beside it (read in every worker).
FAILING = """
import gc
import multiprocessing
import os
import numpy as np

def make(game, seed):
    def act(observation, action_mask):
        if os.path.exists(os.path.join(os.path.dirname(__file__), "FAIL")):
            raise RuntimeError("the opponent's bug")
        return int(np.flatnonzero(action_mask)[0])
    return act
"""


def group(pgid: int) -> list[int]:
    """The live processes of a process group."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:  # just ended
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                members.append(int(entry.name))
    return members


def assert_group_ends(pgid: int, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while group(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = group(pgid)
    for pid in left:  # leave nothing behind even when failing
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left behind: {left}"


@pytest.mark.parametrize("how", ["end", "raise", "exit", "ctrl-c"])
def test_a_script_with_a_live_env_exits_within_seconds_and_leaves_no_process(tmp_path, how):
    (tmp_path / "script.py").write_text(SCRIPT)
    process = subprocess.Popen([sys.executable, "script.py", "loop" if how == "ctrl-c" else how], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=default_signals)
    try:
        assert process.stdout.readline() == "ready\n", process.stderr.read()
        started = time.monotonic()
        if how == "ctrl-c":
            time.sleep(0.2)
            os.killpg(process.pid, signal.SIGINT)  # as a terminal does: to the script and its workers
        code = process.wait(timeout=20)
        assert time.monotonic() - started < 10
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        assert_group_ends(process.pid)
    stderr = process.stderr.read()
    expected = {"end": 0, "raise": 1, "exit": 3, "ctrl-c": -signal.SIGINT}[how]
    assert code == expected, stderr
    if how == "ctrl-c":
        assert "KeyboardInterrupt" in stderr


def workers(envs) -> list:
    return list(envs.unwrapped._processes)


def legal(envs) -> np.ndarray:
    return envs.unwrapped.action_masks().argmax(1)


def assert_deals_like_a_fresh_env(envs, seed: int, **kwargs) -> None:
    """``reset(seed)`` and a few steps give what a fresh env in this process gives."""
    fresh = gymnasium.make_vec(env_id("lost_cities"), num_envs=envs.num_envs, **kwargs)
    for a, b in zip(envs.reset(seed=seed), fresh.reset(seed=seed), strict=True):
        np.testing.assert_array_equal(a["seat"] if isinstance(a, dict) else a, b["seat"] if isinstance(b, dict) else b)
    for _ in range(30):
        actions = legal(fresh)
        for a, b in zip(envs.step(actions)[:4], fresh.step(actions)[:4], strict=True):
            np.testing.assert_array_equal(a, b)
    fresh.close()


@pytest.mark.parametrize("when", ["between steps", "during a step"])
def test_a_killed_worker_is_one_line_and_close_still_ends_everything(when):
    envs = gymnasium.make_vec(env_id("lost_cities"), num_envs=4, num_workers=2)
    processes = workers(envs)
    victim = processes[1].pid
    try:
        envs.reset(seed=0)
        if when == "between steps":
            os.kill(victim, signal.SIGKILL)
            processes[1].join(5)
        else:  # stopped, so that the step waits on it, and killed while it waits
            os.kill(victim, signal.SIGSTOP)
            threading.Timer(0.3, os.kill, (victim, signal.SIGKILL)).start()
        for call in (lambda: envs.step(np.zeros(4, np.int64)), lambda: envs.reset(seed=0)):
            with pytest.raises(RuntimeError, match=r"worker tabletop-games-2-4 \(pid \d+\) was killed by SIGKILL: "
                                                   r"its games are lost; close\(\) this env") as error:
                call()
            assert "\n" not in str(error.value)
    finally:
        envs.close()
    assert not any(p.is_alive() for p in processes)


def test_a_stopped_worker_is_one_line_after_the_timeout_and_close_kills_it():
    envs = gymnasium.make_vec(env_id("lost_cities"), num_envs=4, num_workers=2, worker_timeout=1)
    processes = workers(envs)
    try:
        envs.reset(seed=0)
        os.kill(processes[0].pid, signal.SIGSTOP)
        started = time.monotonic()
        with pytest.raises(RuntimeError, match=r"worker tabletop-games-0-2 \(pid \d+\) gave no answer to step within "
                                               r"1 s \(stopped, or busy that long: worker_timeout sets it\)"):
            envs.step(legal(envs))
        assert time.monotonic() - started < 3
        with pytest.raises(RuntimeError, match=r"step\(\) is refused: step\(\) failed \(RuntimeError\), so some "
                                               r"games may be out of step"):
            envs.step(np.zeros(4, np.int64))
    finally:
        started = time.monotonic()
        envs.close()
        assert time.monotonic() - started < 5
    assert not any(p.is_alive() for p in processes)


def test_an_interrupted_step_refuses_all_but_reset_and_close_then_reset_deals_as_a_fresh_env():
    envs = gymnasium.make_vec(env_id("lost_cities"), num_envs=4, num_workers=2, opponent="heuristic")
    processes = workers(envs)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        envs.reset(seed=0)
        os.kill(processes[0].pid, signal.SIGSTOP)  # the step waits on it: Ctrl-C lands inside the step
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(KeyboardInterrupt):
            envs.step(legal(envs))
        for call, name in [(lambda: envs.step(np.zeros(4, np.int64)), "step"),
                           (lambda: envs.unwrapped.action_masks(), "action_masks"),
                           (lambda: envs.unwrapped.set_pool([]), "set_pool")]:
            with pytest.raises(RuntimeError, match=rf"^{name}\(\) is refused: step\(\) was interrupted "
                                                   r"\(KeyboardInterrupt\), so some games may be out of step with "
                                                   r"what the env returned; call reset\(\)") as error:
                call()
            assert "\n" not in str(error.value)
        with pytest.raises(ValueError, match="the env is out of step: call reset"):
            envs.reset(options={"reset_mask": np.array([True, False, False, False])})
        # The stopped worker goes on while reset waits: its answer to the interrupted step comes first, and is
        # dropped, not taken for its answer to reset.
        threading.Timer(0.3, os.kill, (processes[0].pid, signal.SIGCONT)).start()
        assert_deals_like_a_fresh_env(envs, seed=5, opponent="heuristic")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        for process in processes:
            if process.is_alive():
                os.kill(process.pid, signal.SIGCONT)
        envs.close()
    assert not any(p.is_alive() for p in processes)


@pytest.mark.parametrize("num_workers", [None, 2])
def test_an_opponent_that_raises_is_one_line_then_reset_deals_as_a_fresh_env(tmp_path, num_workers):
    (tmp_path / "failing.py").write_text(FAILING)
    opponent = f"{tmp_path / 'failing.py'}:make"
    envs = gymnasium.make_vec(env_id("lost_cities"), num_envs=4, num_workers=num_workers, opponent=opponent)
    try:
        envs.reset(seed=0)
        (tmp_path / "FAIL").touch()
        expected = r"worker tabletop-games-0-2: RuntimeError: the opponent's bug" if num_workers else \
            "the opponent's bug"
        with pytest.raises(RuntimeError, match=expected) as error:
            for _ in range(10):  # until an opponent acts (the learner plays and draws in one turn)
                envs.step(legal(envs))
        assert "\n" not in str(error.value)
        with pytest.raises(RuntimeError, match=r"step\(\) is refused: step\(\) failed \(RuntimeError\)"):
            envs.step(np.zeros(4, np.int64))
        (tmp_path / "FAIL").unlink()
        assert_deals_like_a_fresh_env(envs, seed=2, opponent=opponent)
    finally:
        envs.close()


@pytest.mark.parametrize("num_workers", [None, 2])
def test_every_call_after_close_is_one_line(num_workers):
    envs = gymnasium.make_vec(env_id("lost_cities"), num_envs=2, num_workers=num_workers)
    envs.reset(seed=0)
    envs.close()
    envs.close()  # closing twice is fine
    for call, name in [(lambda: envs.step(np.zeros(2, np.int64)), "step"), (lambda: envs.reset(seed=0), "reset"),
                       (lambda: envs.unwrapped.action_masks(), "action_masks"),
                       (lambda: envs.unwrapped.set_pool([]), "set_pool")]:
        with pytest.raises(RuntimeError, match=rf"^{name}\(\) was called after close\(\); make a new env$"):
            call()


def test_an_env_collected_without_close_ends_its_workers():
    envs = gymnasium.make_vec(env_id("lost_cities"), num_envs=2, num_workers=2)
    envs.reset(seed=0)
    processes = workers(envs)
    del envs
    gc.collect()
    assert not any(p.is_alive() for p in processes)


def test_a_wrong_argument_found_by_the_workers_is_the_line_of_the_games_in_this_process():
    for kwargs in ({"opponent": "no_such_agent"}, {"opponent": "tests/custom_agents.py:broken"}):
        with pytest.raises(ValueError) as alone:
            gymnasium.make_vec(env_id("lost_cities"), num_envs=2, **kwargs)
        before = set(multiprocessing.active_children())
        with pytest.raises(type(alone.value)) as sharded:
            gymnasium.make_vec(env_id("lost_cities"), num_envs=2, num_workers=2, **kwargs)
        assert str(sharded.value) == str(alone.value) and "\n" not in str(sharded.value)
        assert not set(multiprocessing.active_children()) - before  # the workers that found it are gone

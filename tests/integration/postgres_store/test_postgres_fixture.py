"""The test PostgreSQL never outlives its test run: a run killed with kill -9 leaves no
postmaster behind, and the next run removes what a crashed one left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.postgres_server import BASE

ROOT = Path(__file__).resolve().parents[3]
RUN = f"""
import sys, time
sys.path.insert(0, {str(ROOT)!r})
from tests.postgres_server import EmbeddedPostgres
server = EmbeddedPostgres().start()
print(server.folder, int((server.data / "postmaster.pid").read_text().split()[0]), flush=True)
time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def test_a_test_run_killed_with_kill_9_leaves_no_postmaster_running() -> None:
    run = subprocess.Popen([sys.executable, "-c", RUN], stdout=subprocess.PIPE, text=True)
    folder, postmaster = run.stdout.readline().split()
    assert alive(int(postmaster))
    run.send_signal(signal.SIGKILL)
    run.wait()
    assert wait_until(lambda: not alive(int(postmaster)), 60), "the postmaster outlived the killed run"
    assert wait_until(lambda: not Path(folder).exists(), 30)


def test_a_new_server_removes_the_folders_of_runs_that_are_gone() -> None:
    BASE.mkdir(exist_ok=True)
    leftover = BASE / "run-999999999-0"  # no such process
    (leftover / "data").mkdir(parents=True)
    (leftover / "data" / "postmaster.pid").write_text("999999999\n")
    from tests.postgres_server import _remove_leftovers

    _remove_leftovers()
    assert not leftover.exists()

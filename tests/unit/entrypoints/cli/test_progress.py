"""The progress reporter of long commands, and Ctrl-C between batches."""

from __future__ import annotations

import io
import os
import signal

import pytest

from local_mcp_memory.entrypoints.cli.progress import ProgressBar, StopOnInterrupt


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_off_a_terminal_it_writes_a_plain_line_at_most_every_interval_and_the_last_state() -> None:
    stream, clock = io.StringIO(), Clock()
    bar = ProgressBar("import", stream, interval=5.0, clock=clock)
    for done in range(0, 101, 10):
        clock.now = done / 10
        bar(done, 100)
    bar.finish()
    assert stream.getvalue().splitlines() == [
        "import  0/100  0%  0/s",
        "import  50/100  50%  10/s  ETA 0:00:05",
        "import  100/100  100%  10/s",
    ]


def test_on_a_terminal_it_rewrites_one_line_and_ends_it() -> None:
    stream, clock = Terminal(), Clock()
    bar = ProgressBar("reembed", stream, clock=clock)
    bar(0, 4)
    clock.now = 1.0
    bar(2, 4)
    bar.finish()
    assert stream.getvalue() == "\rreembed  0/4  0%  0/s\x1b[K\rreembed  2/4  50%  2/s  ETA 0:00:01\x1b[K\n"


def test_a_first_ctrl_c_asks_to_stop_at_the_next_check() -> None:
    stream = io.StringIO()
    with StopOnInterrupt(stream) as stop:
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.requested
        with pytest.raises(KeyboardInterrupt):
            stop.check()
    assert "stopping after the current batch" in stream.getvalue()


def test_a_second_ctrl_c_stops_at_once() -> None:
    with StopOnInterrupt(io.StringIO()):
        os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)


def test_the_previous_handler_is_restored() -> None:
    before = signal.getsignal(signal.SIGINT)
    with StopOnInterrupt(io.StringIO()):
        pass
    assert signal.getsignal(signal.SIGINT) is before

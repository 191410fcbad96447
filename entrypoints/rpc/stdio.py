"""The stdio transport: NDJSON, one JSON-RPC message per line in, one reply per line out.

stdout carries protocol lines only (logs go to stderr). Blank lines are skipped. Any other
line, whatever its bytes (not UTF-8, not JSON, truncated, nested too deep), gets one reply
line, an error object when it is no request (``entrypoints.rpc.dispatcher``), and the next line
is served. A line longer than ``MAX_LINE`` bytes is answered with an invalid-request error
and skipped.
EOF on stdin, SIGINT and SIGTERM end the loop cleanly: a request being handled is
finished and answered first.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import BinaryIO

from local_mcp_memory.entrypoints.rpc.errors import INVALID_REQUEST, RpcError
from local_mcp_memory.entrypoints.rpc.dispatcher import Dispatcher, error_reply
from local_mcp_memory.entrypoints.logs import get_logger

MAX_LINE = 16 * 1024 * 1024

log = get_logger()


class _Stop(Exception):
    """A signal asked the loop to end."""


class StdioServer:
    def __init__(self, dispatcher: Dispatcher, stdin: BinaryIO, stdout: BinaryIO) -> None:
        self._dispatcher = dispatcher
        self._stdin = stdin
        self._stdout = stdout
        self._busy = False
        self._stop_requested = False

    def serve(self, install_signals: bool = True) -> None:
        if install_signals:
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, self._on_signal)
        try:
            while not self._stop_requested:
                line = self._stdin.readline(MAX_LINE + 1)
                if not line:
                    break
                self._busy = True
                try:
                    self._answer(line)
                finally:
                    self._busy = False
        except _Stop:
            pass
        except BrokenPipeError:
            log.info("stdout_closed")

    def _answer(self, line: bytes) -> None:
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while True:  # skip the rest of the oversized line
                rest = self._stdin.readline(MAX_LINE)
                if not rest or rest.endswith(b"\n"):
                    break
            self._write(error_reply(RpcError(INVALID_REQUEST, f"Invalid request: a line may hold at most {MAX_LINE} bytes")))
            return
        if not line.strip():
            return
        reply = self._dispatcher.handle(line)
        if reply is not None:
            self._write(reply)

    def _write(self, reply: bytes) -> None:
        self._stdout.write(reply + b"\n")
        self._stdout.flush()

    def _on_signal(self, signum: int, frame: object) -> None:
        log.info("signal_received", signal=signal.Signals(signum).name)
        self._stop_requested = True
        if not self._busy:
            raise _Stop()


def run_stdio(dispatcher: Dispatcher, stdin: BinaryIO, stdout: BinaryIO, on_exit: Callable[[], None]) -> None:
    try:
        StdioServer(dispatcher, stdin, stdout).serve()
    finally:
        on_exit()

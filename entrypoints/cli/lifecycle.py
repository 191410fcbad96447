"""The data commands of ``mcp-memory``: export, import, reembed (and --drop), stats,
verify, salvage.

Each command function takes built services and the streams it writes to, and returns the
exit code: ``EXIT_OK``; ``EXIT_FAILED`` with the reason on stderr (a bad input file, an
embedder or store error, a refused request); ``EXIT_INTERRUPTED`` after Ctrl-C, keeping
what was done (running the same command again resumes). Usage errors (``EXIT_USAGE``) are
argparse's, before any of these runs. ``run`` is what ``entrypoints.cli`` calls.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from datetime import datetime, timezone
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, TextIO

import msgspec

from local_mcp_memory.application.drop_namespace import DropNamespace, drop_namespace
from local_mcp_memory.application.errors import ApplicationError, ImportFileInvalid
from local_mcp_memory.application.export_notes import ExportFile, ExportNotes, export_notes
from local_mcp_memory.application.import_notes import ImportNotes, import_notes
from local_mcp_memory.application.ports import Progress
from local_mcp_memory.application.reembed import Reembed, reembed
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.stats import GetStats, get_stats
from local_mcp_memory.domain.errors import DomainError
from local_mcp_memory.domain.identifiers import Namespace
from local_mcp_memory.entrypoints.composition.adapters import export_reader, export_writer
from local_mcp_memory.entrypoints.rpc.errors import explain
from local_mcp_memory.entrypoints.methods.stats import stats_view
from local_mcp_memory.entrypoints.cli.progress import ProgressBar, StopOnInterrupt
from local_mcp_memory.entrypoints.cli.store_directory import local_store_problem

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def run(args: argparse.Namespace) -> int:
    """Run a parsed data command against the store and config that its flags name."""
    from local_mcp_memory.entrypoints.composition.compose import compose, configure_logging
    from local_mcp_memory.entrypoints.composition.settings import ServerOptions, is_database_store, store_problem, store_setting_at_start
    from local_mcp_memory.entrypoints.logs import LOG_LEVEL_ENV

    configure_logging({LOG_LEVEL_ENV: "WARNING", **os.environ})
    name, err = args.command, sys.stderr
    if name in ("verify", "salvage"):  # the data directory only, read-only: no services built
        local = ServerOptions.resolve(os.environ, None, args.data_dir, args.store)
        if is_database_store(local.store):
            err.write(
                f"mcp-memory {name}: checks the local store's files only; for a PostgreSQL store use the "
                "database's own tools (pg_dump for a backup, pg_amcheck for damage)\n"
            )
            return EXIT_USAGE
        data_dir = Path(os.path.expanduser(local.store)).absolute() if local.store else local.data_dir
        if name == "verify":
            return _guarded(name, err, lambda: verify_command(data_dir, sys.stdout))
        return _guarded(name, err, lambda: salvage_command(data_dir, args.out, err=err))
    try:
        export_file = _read(args.file) if name == "import" else None
    except (ImportFileInvalid, OSError) as exc:
        err.write(f"mcp-memory import: {args.file}: {_reason(exc)}; nothing was imported\n")
        return EXIT_FAILED
    options = ServerOptions.resolve(os.environ, args.config, args.data_dir, args.store)
    problem = store_problem(store_setting_at_start(options))  # an unreadable config file: compose reports it
    if problem is not None:
        err.write(f"mcp-memory {name}: {problem}\n")
        return EXIT_USAGE
    if (problem := local_store_problem(options)) is not None:
        err.write(f"mcp-memory {name}: {problem}\n")
        return EXIT_FAILED
    if name == "export" and args.out not in (None, "-"):
        if (problem := output_problem(args.out)) is not None:
            err.write(f"mcp-memory export: --out {args.out} {problem}\n")
            return EXIT_FAILED
        args.out = os.path.realpath(args.out)  # through a symlink: the link stays, its file is written

    def against_the_store() -> int:
        services = compose(options)
        try:
            return _dispatch(args, services, export_file, err)
        finally:
            services.close()

    return _guarded(name, err, against_the_store)


def _dispatch(args: argparse.Namespace, services: Services, export_file: ExportFile | None, err: TextIO) -> int:
    if args.command == "export":
        return export_command(services, args.out, project=args.project, vectors=args.vectors, err=err)
    if args.command == "import":
        assert export_file is not None
        return import_command(services, export_file, batch=args.batch, err=err)
    if args.command == "reembed" and args.drop is not None:
        return drop_command(services, args.drop, err=err)
    if args.command == "reembed":
        return reembed_command(services, from_namespace=args.from_namespace, batch=args.batch, err=err)
    return stats_command(services, sys.stdout, project=args.project)


# ---------------------------------------------------------------- the commands


def export_command(
    services: Services, out: str | None, *, project: str | None, vectors: bool, err: TextIO
) -> int:
    """To ``out`` (written whole or not at all) or, with None or ``-``, to stdout."""
    export = export_notes(ExportNotes(project, vectors), services)
    with _output(out) as stream:
        export_writer().write(export, stream, services.clock.now(), vectors)
    err.write(f"exported {export.note_count} notes, {len(export.globals)} global settings and {len(export.links)} links\n")
    return EXIT_OK


def import_command(services: Services, export_file: ExportFile, *, batch: int, err: TextIO) -> int:
    command = ImportNotes(export_file.notes, export_file.globals, batch, export_file.links)
    with _progress("import", err) as progress:
        done = import_notes(command, services, progress)
    err.write(
        f"imported {len(command.notes)} notes into {done.namespace}: {done.written} written "
        f"({done.embedded} embedded), {done.unchanged} already there; {len(command.globals)} global "
        f"settings: {done.globals_written} written, {done.globals_unchanged} already there; {len(command.links)} "
        f"links: {done.links_written} written, {done.links_unchanged} already there"
        + (f"; {done.expired} notes skipped as expired, with {done.expired_links} links" if done.expired else "")
        + "\n"
    )
    return EXIT_OK


def reembed_command(services: Services, *, from_namespace: Namespace | None, batch: int, err: TextIO) -> int:
    with _progress("reembed", err) as progress:
        done = reembed(Reembed(from_namespace, batch), services, progress)
    err.write(f"re-embedded {done.reembedded} notes into {done.namespace}\n")
    for namespace, count in sorted(services.store.namespaces().items(), key=lambda item: str(item[0])):
        if namespace != done.namespace:
            err.write(
                f"{namespace} keeps {count} vectors; once you no longer need them: "
                f"mcp-memory reembed --drop {namespace}\n"
            )
    return EXIT_OK


def drop_command(services: Services, namespace: Namespace, *, err: TextIO) -> int:
    dropped = drop_namespace(DropNamespace(namespace), services)
    err.write(f"dropped {dropped} vectors of {namespace}\n")
    return EXIT_OK


def stats_command(services: Services, out: TextIO, *, project: str | None) -> int:
    view = stats_view(get_stats(GetStats(project), services))
    out.write(msgspec.json.format(msgspec.json.encode(view), indent=2).decode() + "\n")
    return EXIT_OK


def verify_command(data_dir: Path, out: TextIO) -> int:
    from local_mcp_memory.entrypoints.composition.adapters import check_local_store

    if not data_dir.is_dir():
        out.write(f"{data_dir}: {'a file, not a directory' if data_dir.is_file() else 'no such directory'}\n")
        return EXIT_FAILED
    checkup = check_local_store(data_dir)
    for path, problems in checkup.problems.items():
        out.write(f"{path}: damaged ({len(problems)} found)\n")
        out.writelines(f"  {problem}\n" for problem in problems)
    out.writelines(f"note: {note}\n" for note in checkup.notes)
    if not checkup.ok:
        out.write("damaged: serve what is intact as usual; `mcp-memory salvage OUT.jsonl` gets every record that verifies\n")
        return EXIT_FAILED
    out.write(f"ok: {checkup.summary}\n")
    return EXIT_OK


def output_problem(out: str) -> str | None:
    """Why ``out`` cannot be a file a command writes whole (to a temporary file renamed over
    it), or None: empty, a directory, or a device, pipe or socket (the rename would put a
    regular file in its place: ``/dev/null`` for one)."""
    if not out:
        return "is empty; name a file"
    try:
        mode = os.stat(out).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc}); name a file"
    if stat.S_ISDIR(mode):
        return "is a directory; name a file"
    if not stat.S_ISREG(mode):
        return "is not a regular file (a device, a pipe or a socket); name a file"
    return None


def salvage_command(data_dir: Path, out: str, *, err: TextIO) -> int:
    from local_mcp_memory.entrypoints.composition.adapters import salvage_local_store

    target = Path(out).absolute()
    if not data_dir.is_dir():
        err.write(f"mcp-memory salvage: {data_dir}: {'a file, not a directory' if data_dir.is_file() else 'no such directory'}\n")
        return EXIT_FAILED
    if (problem := output_problem(out)) is not None:
        err.write(f"mcp-memory salvage: {out} {problem}\n")
        return EXIT_FAILED
    target = Path(os.path.realpath(target))
    if target.resolve().is_relative_to(data_dir.resolve()):
        err.write(f"mcp-memory salvage: {out} is inside the data directory; write it elsewhere\n")
        return EXIT_FAILED
    found, export, unusable = salvage_local_store(data_dir)
    with _output(str(target)) as stream:
        export_writer().write(export, stream, datetime.now(timezone.utc), vectors=any(v is not None for _f, _h, v in found.notes.values()))
    err.writelines(f"  {problem}\n" for problem in found.problems)
    err.write(
        f"salvaged {export.note_count} notes, {len(export.globals)} global settings and {len(export.links)} links into {out}; "
        f"skipped {found.skipped + unusable} records that do not verify\n"
    )
    return EXIT_OK


# ---------------------------------------------------------------- shared pieces


def _guarded(name: str, err: TextIO, action: Callable[[], int]) -> int:
    """``action``'s exit code; failures the user can act on become one line on stderr."""
    try:
        return action()
    except KeyboardInterrupt:
        err.write(f"mcp-memory {name}: interrupted\n")
        return EXIT_INTERRUPTED
    except (ApplicationError, DomainError, OSError) as exc:
        err.write(f"mcp-memory {name}: {_reason(exc)}\n")
        return EXIT_FAILED


@contextmanager
def _progress(label: str, err: TextIO) -> Iterator[Progress]:
    """A progress bar that also honours Ctrl-C between batches, with a resume hint."""
    bar = ProgressBar(label, err)
    with StopOnInterrupt(err) as stop:

        def step(done: int, total: int) -> None:
            bar(done, total)
            stop.check()

        interrupted = False
        try:
            yield step
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            bar.finish()
            if interrupted:
                err.write(f"{bar.done} of {bar.total} notes done and kept; run the same command again to resume\n")


@contextmanager
def _output(path: str | None) -> Iterator[BinaryIO]:
    if path in (None, "-"):
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    target = Path(path)
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    try:
        with _private_file(partial) as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(partial, target)
    except OSError as exc:
        if exc.filename != str(partial):
            raise
        raise OSError(exc.errno, exc.strerror, path) from None  # the user named the target, not our temporary file
    finally:
        partial.unlink(missing_ok=True)


def _private_file(path: Path) -> BinaryIO:
    """A new file only its owner may read (mode 0600 whatever the umask): the notes in it
    are as private as the data directory, and the file renamed over an older one takes
    this mode, not the older file's."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "wb")


def _read(path: str) -> ExportFile:
    if path == "-":
        return export_reader().read(sys.stdin.buffer)
    with open(path, "rb") as stream:
        return export_reader().read(stream)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return explain(exc)


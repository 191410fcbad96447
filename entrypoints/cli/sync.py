"""``mcp-memory sync DIR``: a folder of markdown files kept as notes (SPEC §11).

``add_parser`` registers the command with ``entrypoints.cli``; ``run`` runs it. One sync
prints ``added N, updated N, removed N, unchanged N, skipped N`` (files) on stdout, or with
``--json`` one JSON object, and each skipped file with its reason on stderr. ``--watch``
syncs again after every burst of changes (debounced ~1 s) and prints a line (or object)
each time something changed, until SIGINT or SIGTERM: then it finishes the batch in hand
and exits 0.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any, TextIO

from local_mcp_memory.entrypoints.cli import subcommands

if TYPE_CHECKING:
    from local_mcp_memory.application.ports import MarkdownFolder, Progress
    from local_mcp_memory.application.services import Services
    from local_mcp_memory.application.sync_folder import FolderSynced, SyncFolder

DEFAULT_GROUP = "kb"
BAR_FROM_FILES = 200  # a folder with fewer files syncs without a progress bar ...
BAR_AFTER_SECONDS = 3.0  # ... unless it takes longer than this
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

DESCRIPTION = """\
Keep the markdown files of DIR (*.md, *.markdown) as notes of one project and group:
one note per file, or per `## ` section for a file over 4,000 characters. source is the
path relative to DIR (#slug for a section), title the first heading, tags come from the
front matter's `tags:`. Hidden folders, node_modules and what .gitignore files exclude
are left out. Running it again changes only what changed: unchanged files cost nothing,
an edited file's notes are replaced, a deleted file's notes are removed. Notes written
by hand, and notes synced from other folders, are never touched."""

EXAMPLES = """\
examples:
  mcp-memory sync ~/notes
  mcp-memory sync docs --project ~/code/app --group docs --json
  mcp-memory sync ~/notes --watch
"""


def add_parser(commands: argparse._SubParsersAction, add_path_flags: Callable[[argparse.ArgumentParser], None], epilog: str) -> None:
    sync = commands.add_parser(
        "sync",
        help="keep a folder of markdown files as notes",
        description=DESCRIPTION,
        epilog=f"{EXAMPLES}\n{epilog}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sync.add_argument("dir", metavar="DIR", help="the folder to sync")
    sync.add_argument(
        "--project",
        type=subcommands.project_id,
        metavar="P",
        help="the project the notes belong to: a path or an opaque id, as the methods take it "
        "(default: the main worktree of the git repository holding the working directory, else the working directory)",
    )
    sync.add_argument("--group", type=subcommands.group_id, default=DEFAULT_GROUP, metavar="G", help=f"the notes' groupId (default: {DEFAULT_GROUP})")
    sync.add_argument("--watch", action="store_true", help="then follow changes until Ctrl-C (SIGINT), syncing again ~1 s after each")
    sync.add_argument("--json", action="store_true", help="print one JSON object per sync instead of the summary line")
    add_path_flags(sync)


def run(args: argparse.Namespace) -> int:
    from local_mcp_memory.application.errors import ApplicationError
    from local_mcp_memory.domain.errors import DomainError
    from local_mcp_memory.entrypoints.composition.adapters import markdown_folder
    from local_mcp_memory.entrypoints.composition.compose import compose, configure_logging
    from local_mcp_memory.entrypoints.cli.store_directory import local_store_problem
    from local_mcp_memory.entrypoints.composition.settings import ServerOptions, store_problem, store_setting_at_start
    from local_mcp_memory.entrypoints.logs import LOG_LEVEL_ENV

    configure_logging({LOG_LEVEL_ENV: "WARNING", **os.environ})
    err = sys.stderr
    options = ServerOptions.resolve(os.environ, args.config, args.data_dir, args.store)
    problem = store_problem(store_setting_at_start(options))  # an unreadable config file: compose reports it
    if problem is not None:
        err.write(f"mcp-memory sync: {problem}\n")
        return EXIT_USAGE
    if (problem := local_store_problem(options)) is not None:
        err.write(f"mcp-memory sync: {problem}\n")
        return EXIT_FAILED
    try:
        folder, watch = markdown_folder(args.dir)
    except OSError as exc:
        err.write(f"mcp-memory sync: {args.dir}: {exc.strerror or exc}\n")
        return EXIT_FAILED
    try:
        services = compose(options)
        try:
            if args.watch:
                return watch_command(services, folder, watch, args, sys.stdout, err)
            return sync_command(services, folder, args, sys.stdout, err)
        finally:
            services.close()
    except KeyboardInterrupt:
        err.write("mcp-memory sync: interrupted; what was written is kept, run the same command again to finish\n")
        return EXIT_INTERRUPTED
    except (ApplicationError, DomainError, OSError) as exc:
        err.write(f"mcp-memory sync: {_reason(exc)}\n")
        return EXIT_FAILED


def sync_command(services: Services, folder: MarkdownFolder, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from local_mcp_memory.application.sync_folder import sync_folder
    from local_mcp_memory.entrypoints.cli.progress import StopOnInterrupt

    with StopOnInterrupt(err) as stop, _bar(err) as bar:

        def step(done: int, total: int) -> None:
            bar(done, total)
            stop.check()

        done = sync_folder(_command(args), folder, services, step)
    _report(done, args.json, out, err)
    return EXIT_OK


def watch_command(services: Services, folder: MarkdownFolder, watch: Any, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The first sync, then one after each burst of changes, until SIGINT or SIGTERM. A sync
    that fails (the embedder unreachable, say) is reported and tried again at the next change."""
    from local_mcp_memory.application.errors import ApplicationError
    from local_mcp_memory.application.sync_folder import SyncMemo, sync_folder
    from local_mcp_memory.domain.errors import DomainError

    memo, command = SyncMemo(), _command(args)
    with _stop_on_signals() as stop:

        def step(done: int, total: int) -> None:
            if stop.is_set():
                raise KeyboardInterrupt

        try:
            with _bar(err) as bar:

                def first_step(done: int, total: int) -> None:
                    bar(done, total)
                    step(done, total)

                first = sync_folder(command, folder, services, first_step, memo)
            _report(first, args.json, out, err)
            shown = set(first.skipped)
            for _paths in watch.changes(stop):
                try:
                    done = sync_folder(command, folder, services, step, memo)
                except (ApplicationError, DomainError, OSError) as exc:
                    err.write(f"mcp-memory sync: {_reason(exc)}; trying again at the next change\n")
                    continue
                if done.changed or set(done.skipped) != shown:
                    _report(done, args.json, out, err, skipped=[s for s in done.skipped if s not in shown])
                    shown = set(done.skipped)
        except KeyboardInterrupt:  # asked to stop inside a sync: the batches written are kept
            err.write("mcp-memory sync: stopped; what was written is kept\n")
    return EXIT_OK


def _command(args: argparse.Namespace) -> SyncFolder:
    from local_mcp_memory.application.sync_folder import SyncFolder
    from local_mcp_memory.entrypoints.composition.adapters import default_project

    return SyncFolder(project_id=args.project or default_project(os.getcwd()), group_id=args.group)


def _report(done: FolderSynced, as_json: bool, out: TextIO, err: TextIO, skipped: list | None = None) -> None:
    for item in done.skipped if skipped is None else skipped:
        err.write(f"mcp-memory sync: skipped {_shown(item.path)}: {item.reason}\n")
    if as_json:
        import msgspec

        view = {
            "root": done.root,
            "projectId": done.project_id.value,
            "groupId": done.group_id.value,
            "namespace": None if done.namespace is None else str(done.namespace),
            "added": len(done.added),
            "updated": len(done.updated),
            "removed": len(done.removed),
            "unchanged": done.unchanged,
            "skipped": len(done.skipped),
            "files": {"added": list(done.added), "updated": list(done.updated), "removed": list(done.removed)},
            "skippedFiles": [{"path": s.path, "reason": s.reason} for s in done.skipped],
        }
        out.write(msgspec.json.encode(view).decode() + "\n")
    else:
        out.write(
            f"added {len(done.added)}, updated {len(done.updated)}, removed {len(done.removed)}, "
            f"unchanged {done.unchanged}, skipped {len(done.skipped)}\n"
        )
    out.flush()


def _shown(path: str) -> str:
    """A path as one printable line: as it is, or JSON-quoted when it holds a control character."""
    if path.isprintable():
        return path
    import json

    return json.dumps(path, ensure_ascii=False)


@contextmanager
def _bar(err: TextIO) -> Iterator[Progress]:
    """A progress bar (in files) on stderr for a folder of ``BAR_FROM_FILES`` files or more,
    or a sync still running after ``BAR_AFTER_SECONDS`` (a large file's many sections)."""
    import time

    from local_mcp_memory.entrypoints.cli.progress import ProgressBar

    bar = ProgressBar("sync", err)
    started, shown = time.monotonic(), False

    def step(done: int, total: int) -> None:
        nonlocal shown
        if shown or total >= BAR_FROM_FILES or time.monotonic() - started >= BAR_AFTER_SECONDS:
            shown = True
            bar(done, total)

    try:
        yield step
    finally:
        if shown:
            bar.finish()


@contextmanager
def _stop_on_signals() -> Iterator[threading.Event]:
    """An event set by SIGINT or SIGTERM (in the main thread; elsewhere, never)."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def ask(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, ask) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _reason(exc: BaseException) -> str:
    from local_mcp_memory.entrypoints.rpc.errors import explain

    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return explain(exc)

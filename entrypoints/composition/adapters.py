"""The adapters the commands and hooks use directly, beside the services ``compose`` builds:
each imported when first asked for, so a command loads only what it uses."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from local_mcp_memory.adapters.markdown_folder import FolderWatch
    from local_mcp_memory.application.ports import ExportReader, ExportWriter, MarkdownFolder


def default_project(directory: str) -> str:
    """The projectId used where none is given (SPEC §12): the main worktree of the git
    repository holding ``directory``, else ``directory`` (``adapters.git_worktree``)."""
    from local_mcp_memory.adapters.git_worktree import project_root

    return project_root(directory)


def export_writer() -> ExportWriter:
    """What writes an export file (``adapters.export_file``)."""
    from local_mcp_memory.adapters.export_file import EXPORT_FILE

    return EXPORT_FILE


def export_reader() -> ExportReader:
    """What reads an export file back, checked whole (``adapters.export_file``)."""
    from local_mcp_memory.adapters.export_file import EXPORT_FILE

    return EXPORT_FILE


def markdown_folder(path: str) -> tuple[MarkdownFolder, FolderWatch]:
    """The folder ``mcp-memory sync`` reads (``adapters.markdown_folder``), and its watch.
    ``OSError`` (``NotADirectoryError``, ``FileNotFoundError``) when ``path`` is no folder."""
    from local_mcp_memory.adapters.markdown_folder import FolderWatch, OsMarkdownFolder

    folder = OsMarkdownFolder(path)
    return folder, FolderWatch(folder)


def transcript_events(path: str, stats: object | None = None):
    """The events of a Claude Code transcript, streamed (``adapters.claude_transcript``);
    ``OSError`` when the file cannot be opened."""
    from local_mcp_memory.adapters.claude_transcript import TranscriptStats, read_transcript

    return read_transcript(path, stats if isinstance(stats, TranscriptStats) else None)


def transcript_stats() -> object:
    """A fresh counter of what ``transcript_events`` skipped."""
    from local_mcp_memory.adapters.claude_transcript import TranscriptStats

    return TranscriptStats()


def check_local_store(data_dir: Path):
    """The local store's ``Checkup`` (``adapters.faiss_store.recovery.verify``): every file of its
    live generation checked, nothing written."""
    from local_mcp_memory.adapters.faiss_store.recovery.verify import verify

    return verify(data_dir)


def salvage_local_store(data_dir: Path):
    """Every record of the local store that verifies (``adapters.faiss_store.recovery.salvage``),
    as ``(found, export, unusable)``; nothing written into ``data_dir``."""
    from local_mcp_memory.adapters.faiss_store.recovery.salvage import as_export, salvage

    found = salvage(data_dir)
    export, unusable = as_export(found)
    return found, export, unusable

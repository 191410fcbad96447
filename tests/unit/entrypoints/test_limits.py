"""Each limit has one definition: the use cases, the command line and the tool texts agree."""

from __future__ import annotations

import pytest

from local_mcp_memory.application import DEFAULT_BATCH, MAX_BATCH
from local_mcp_memory.application.add_notes import AddNotes
from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.import_notes import ImportNotes
from local_mcp_memory.application.list_recent import ListRecent
from local_mcp_memory.application.reembed import Reembed
from local_mcp_memory.application.search import SearchNotes
from local_mcp_memory.entrypoints.cli.main import _parser
from local_mcp_memory.entrypoints.methods import add_notes, list_recent, search


@pytest.mark.parametrize("command", [lambda size: Reembed(batch_size=size), lambda size: ImportNotes((), batch_size=size)])
def test_the_batch_use_cases_take_batches_up_to_the_one_limit(command) -> None:
    assert command(MAX_BATCH).batch_size == MAX_BATCH
    with pytest.raises(InvalidRequest, match=f"1..{MAX_BATCH}"):
        command(MAX_BATCH + 1)
    assert Reembed().batch_size == ImportNotes(()).batch_size == DEFAULT_BATCH


@pytest.mark.parametrize("command", ["import", "reembed"])
def test_the_command_line_takes_the_same_batches(command: str) -> None:
    extra = ["export.jsonl"] if command == "import" else []
    assert _parser().parse_args([command, *extra]).batch == DEFAULT_BATCH
    assert _parser().parse_args([command, "--batch", str(MAX_BATCH), *extra]).batch == MAX_BATCH
    with pytest.raises(SystemExit):
        _parser().parse_args([command, "--batch", str(MAX_BATCH + 1), *extra])


def test_the_tool_texts_state_the_use_cases_limits() -> None:
    assert f"(1..{AddNotes.MAX_NOTES})" in add_notes.METHOD.description
    assert f"limit: 1..{ListRecent.MAX_LIMIT}, default {ListRecent.DEFAULT_LIMIT}." in list_recent.METHOD.description
    assert f"topK: 1..{SearchNotes.MAX_TOP_K}," in search.METHOD.description

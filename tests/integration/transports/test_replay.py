"""Every ``memory.*`` method, its error paths and the MCP methods, over stdio and HTTP
against real servers, answer byte for byte what ``tests/data/replay.jsonl`` recorded
(``scripts/replay.py``: ids, times and the home directory normalized). A change of the
code that should not change behaviour keeps this passing; a change meant to change an
answer records the file anew and shows the difference in its diff."""

from __future__ import annotations

import difflib
from pathlib import Path

from local_mcp_memory.entrypoints.methods.table import METHODS
from scripts.replay import replay, steps

RECORDED = Path(__file__).resolve().parents[2] / "data" / "replay.jsonl"


def test_every_method_answers_as_recorded_over_stdio_and_http(tmp_path: Path) -> None:
    answers = replay(tmp_path)
    recorded = RECORDED.read_text(encoding="utf-8").splitlines()
    diff = "\n".join(difflib.unified_diff(recorded, answers, "recorded", "now", lineterm="", n=0))
    assert answers == recorded, (
        "answers differ from tests/data/replay.jsonl; if the change is meant, record it anew with "
        f".venv/bin/python scripts/replay.py tests/data/replay.jsonl\n{diff[:6000]}"
    )


def test_the_record_covers_every_method_on_both_transports() -> None:
    lines = RECORDED.read_text(encoding="utf-8")
    for transport in ("stdio", "http"):
        assert f'"transport": "{transport}"' in lines
    called = {method for _label, method, _params in steps()}
    assert set(METHODS) <= called, f"not replayed: {sorted(set(METHODS) - called)}"

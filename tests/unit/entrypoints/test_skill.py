"""The Claude Code skill (``skills/mcp-memory/SKILL.md``) keeps up with the tools it teaches."""

from __future__ import annotations

from pathlib import Path

from local_mcp_memory.application.search import DEFAULT_MODE, MODES
from local_mcp_memory.entrypoints.methods.table import METHODS

SKILL = Path(__file__).resolve().parents[3] / "skills" / "mcp-memory" / "SKILL.md"


def test_the_skill_names_every_tool() -> None:
    text = SKILL.read_text()
    missing = [name.replace(".", "_") for name in METHODS if f"`{name.replace('.', '_')}`" not in text]
    assert missing == []


def test_the_skills_first_table_is_the_default_tool_list() -> None:
    from local_mcp_memory.entrypoints.mcp.tools import DEFAULT_TOOLS

    first_table = SKILL.read_text().split("| tool | use it to |")[1].split("\n\n")[0]
    named = {word.strip("`,") for line in first_table.splitlines() if line.startswith("| `") for word in line.split("|")[1].split()}
    assert named == DEFAULT_TOOLS


def test_the_skill_explains_every_search_mode_and_the_default() -> None:
    text = SKILL.read_text()
    assert all(f'`"{mode}"`' in text for mode in MODES)
    assert f'`"{DEFAULT_MODE}"` (the default)' in text


def test_the_skill_says_how_to_get_what_a_cut_result_left_out() -> None:
    text = SKILL.read_text()
    assert "`truncated`" in text and "`leftOut`" in text and "`memory_get`" in text

"""The documentation as a reader meets it: every relative link in README.md, ARCHITECTURE.md and
docs/*.md leads to a file of the repository and, with a ``#fragment``, to a heading of that
file; the README and ARCHITECTURE stay within their lengths; docs/benchmarks.md is what
``python -m bench.report`` writes from bench/results/."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from bench import report

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 300
ARCHITECTURE_MAX_LINES = 450

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"`+[^`]*`+")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def documents() -> list[Path]:
    return [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").glob("*.md"))]


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").lower()
    kept = "".join(
        c for c in text if c in " -_" or unicodedata.category(c)[0] in "LNM"
    )
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        heading = HEADING.match(line)
        if heading is None:
            continue
        base = slug(heading.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[tuple[int, str]]:
    return [
        (number, target)
        for number, line in prose_lines(path.read_text(encoding="utf-8"))
        for target in LINK.findall(CODE_SPAN.sub("", line))
        if not EXTERNAL.match(target)
    ]


def broken(path: Path, root: Path = ROOT) -> list[str]:
    problems = []
    for number, target in links(path):
        file_part, _, fragment = target.partition("#")
        destination = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.relative_to(root)}:{number}: {target}"
        if not destination.exists():
            problems.append(f"{where}: no such file")
        elif fragment and destination.suffix == ".md" and fragment not in anchors(destination):
            problems.append(f"{where}: no heading #{fragment} in {destination.name}")
    return problems


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path: Path) -> None:
    assert broken(path) == []


def test_the_link_check_sees_a_broken_file_and_a_broken_anchor(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other\n\n## `memory.search`: modes\n", encoding="utf-8")
    page.write_text(
        "# Page\n\n[ok](other.md#memorysearch-modes) [self](#page) `[code](missing.md)`\n"
        "[gone](missing.md) [bad](other.md#nowhere) [web](https://example.com/x.md)\n"
        "```\n[fenced](missing.md)\n```\n",
        encoding="utf-8",
    )
    assert [(n, t) for n, t in links(page)] == [
        (3, "other.md#memorysearch-modes"), (3, "#page"), (4, "missing.md"), (4, "other.md#nowhere"),
    ]
    problems = [p.split(": ", 1)[1] for p in broken(page, tmp_path)]
    assert problems == ["missing.md: no such file", "other.md#nowhere: no heading #nowhere in other.md"]


def test_slugs_follow_github() -> None:
    assert slug("Claude Code: the SessionStart hook") == "claude-code-the-sessionstart-hook"
    assert slug("`memory.context`") == "memorycontext"
    assert slug("Data directory (format 6)") == "data-directory-format-6"
    assert slug("Café & Crème!") == "café--crème"


def test_readme_and_architecture_stay_short() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= README_MAX_LINES
    assert len((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8").splitlines()) <= ARCHITECTURE_MAX_LINES


def test_benchmarks_page_is_generated_from_the_results() -> None:
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert page == report.render(ROOT / "bench" / "results"), "run: python -m bench.report"

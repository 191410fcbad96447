"""The secret formats of ``tests/data/secrets_corpus.txt``: the text with its marks removed,
and the marked values, which must not survive anything that stores or prints text."""

from __future__ import annotations

import re
from pathlib import Path

CORPUS = Path(__file__).parent / "data" / "secrets_corpus.txt"
_MARKED = re.compile(r"⟦(.*?)⟧", re.DOTALL)
WINDOW = 12
"""A stretch of a secret this long found anywhere counts as the secret surviving."""


def _marked_text() -> str:
    lines = CORPUS.read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith("#"))


def corpus_text() -> str:
    return _MARKED.sub(r"\1", _marked_text())


def secret_values() -> list[str]:
    return _MARKED.findall(_marked_text())


def surviving(text: str) -> list[str]:
    """The secrets of the corpus of which a stretch of ``WINDOW`` characters is in ``text``."""
    found = []
    for value in secret_values():
        pieces = [piece for piece in re.split(r"\\n|\n", value) if piece]
        for piece in pieces:
            windows = {piece[i : i + WINDOW] for i in range(max(1, len(piece) - WINDOW + 1))}
            if any(window in text for window in windows):
                found.append(piece)
                break
    return found

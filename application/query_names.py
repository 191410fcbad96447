"""Whether a search query names something the project's notes name: a person, a product, a
number, a version, an identifier (``names_known``).

Hybrid search gives keywords and context their weight only for such a query. A name is
where exact words carry what a sentence model blurs ("Caroline", "LGBTQ", "v2", "auth_service",
"Postgres 16"), and a conversation's answer often follows the turn that names it. A query
that names nothing is worded in ordinary vocabulary; the notes it shares those words with
are often neighbouring subjects ("leader", "version", "review"), and meaning decides better
(docs/retrieval.md, "Queries that name nothing").

A word is name-like when it holds a digit, an identifier's inner ``.``, ``_``, ``/``, ``#``
or ``+``, a lower-case letter followed by a capital (camelCase), capitals and no lower-case
letter in two characters or more (an acronym), or a capital first letter where it does not
begin a sentence (after a ``.``, ``!``, ``?``, ``:``, ``;`` or a new line). A query names something known when one of its words, name-like in the query or
in one of the texts, is a word of those texts: the keyword step's hits, so a name the
project never wrote counts for nothing, and a name typed in lower case still counts where
the notes write it as a name and none of them writes it in lower case ("app" is a word where
one hit says "App Review" and another "the app").
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable

_WORD = re.compile(r"\w+(?:[.\-/+#]\w+)*")  # "Caroline's": "Caroline", then "s"
_INITIAL = re.compile(r"[.!?:;\n]\W*(\w+(?:[.\-/+#]\w+)*)")  # a word beginning a sentence (the text's first aside)
_IDENTIFIER = re.compile(r"\d|[a-z][A-Z]|\w[._/#+]\w")

READ_CHARS = 500
"""How much of each text is read: a name a note gives is near its start, and each text's
reading is kept for the next searches (whose hits are mostly the same notes)."""


def name_like(word: str, begins_sentence: bool) -> bool:
    """Whether ``word`` reads as a name, a number or an identifier (module docstring)."""
    if _IDENTIFIER.search(word):
        return True
    if len(word) < 2:
        return False  # "I", "A"
    return word.isupper() or (word[0].isupper() and not begins_sentence)  # an acronym, or a capital


def names_known(query: str, texts: Iterable[str]) -> bool:
    """Whether ``query`` names something ``texts`` name too (module docstring)."""
    asked, names, _ = _reading(query[:READ_CHARS])
    written: set[str] = set()
    plain: set[str] = set()
    for text in texts:
        words, as_names, as_words = _reading(text[:READ_CHARS])
        if not names.isdisjoint(words):
            return True
        written |= as_names & asked
        plain |= as_words & asked
    return not written <= plain  # typed in lower case: a name where no hit writes it as a word


@functools.lru_cache(maxsize=4096)
def _reading(head: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The words of ``head`` (a text's first ``READ_CHARS``), casefolded; those of them it
    writes as names somewhere; and those it writes in lower case, as ordinary words. In the
    regular expression engine, then only the words with a capital, a digit, an inner mark or
    no case looked at one by one."""
    words = _WORD.findall(head)
    keys = frozenset(map(str.casefold, words))
    marked = [word for word in words if not word.islower() or not word.isalpha()]
    if not marked:
        return keys, frozenset(), keys
    plain = frozenset(word.casefold() for word in words if word.islower() and word.isalpha())
    initial = Counter(_INITIAL.findall(head))
    initial[words[0]] += 1
    names = {word.casefold() for word, n in Counter(marked).items() if name_like(word, n <= initial[word])}
    return keys, frozenset(names), plain

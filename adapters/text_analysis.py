"""Text analysis: the terms a text is indexed and searched by.

Text is NFKC-normalized and lower-cased; runs of word characters (``\\w+``, any script)
are words; inside them, runs of CJK characters (Han, kana, Hangul), which are not separated
by spaces, become single characters plus overlapping bigrams, so ``東京都`` yields
``東 京 都 東京 京都``; single kana (mostly particles and inflections) are dropped, their
bigrams kept. Function words of English, Spanish, French and German (``STOPWORDS``) are
dropped, and ASCII words are stemmed by the Snowball English stemmer (PyStemmer), so
``painted``, ``paints`` and ``painting`` all index as ``paint``, and ``agencies`` and
``agency`` as ``agenc``. Snowball replaced a hand-written suffix stripper: LoCoMo keyword
recall@5 0.544 -> 0.556, hybrid 0.659 -> 0.670 (``bench.locomo``).

``ANALYSIS`` names the analysis: a store that keeps terms (PostgreSQL's note_terms) must
derive them again when it changes.

Pure functions of their input; used by ``keyword_index`` for both notes and queries.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

import Stemmer

_WORD = re.compile(r"\w+")
_CJK = re.compile(
    "([\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]+)"
)

_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")

STOPWORDS = frozenset(
    # English
    "a about above after again against all also am an and any are as at be because been before being "
    "below between both but by can cannot could d did do does doing down during each few for from "
    "further get got had has have having he her here hers herself him himself his how i if in into is "
    "it its itself just ll m me more most my myself no nor not of off on once only or other ought our "
    "ours ourselves out over own re s same she should so some such t than that the their theirs them "
    "themselves then there these they this those through to too under until up ve very was we were "
    "what when where which while who whom why will with would you your yours yourself yourselves "
    # Spanish
    "al algo como con cual cuando cómo cuándo de del donde dónde el ella en entre es esa ese eso esta "
    "este esto hay la las le les lo los me mi mis muy más nos o para pero por que qué se sin sobre su "
    "sus te tu tus un una uno unos y ya yo él "
    # French
    "au aux ce ces dans des du elle est et il ils je la le les leur leurs ma mes mon ne nous on ou par "
    "pas pour qui quoi sa se ses son sont sur ta tes ton tu une vous à "
    # German
    "als auch auf das dem den der des die du ein eine einer eines er es für ich ihr im ist mit nicht "
    "sie sind und von wann was wie wir wo zu".split()
)

ANALYSIS = "snowball-english-1"

_ENGLISH = Stemmer.Stemmer("english", 10_000)  # with a cache of 10,000 words: ~1 us a word


def stem(word: str) -> str:
    """The Snowball English stem of an ASCII word of letters (``hiking`` -> ``hike``,
    ``adoption`` -> ``adopt``); any other word unchanged (numbers, other scripts)."""
    if not (word.isascii() and word.isalpha()):
        return word
    return _ENGLISH.stemWord(word)


def tokens(text: str) -> list[str]:
    """The index terms of a text, in order, repeats kept."""
    out: list[str] = []
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).lower()):
        if word in STOPWORDS:
            continue
        if word.isascii():
            out.append(stem(word))
            continue
        for number, part in enumerate(_CJK.split(word)):
            if not part:
                continue
            if number % 2 == 0:
                out.append(part)
            else:
                out.extend(c for c in part if not _KANA.match(c))
                out.extend(part[i : i + 2] for i in range(len(part) - 1))
    return out


def document_tokens(title: str | None, text: str, tags: Iterable[str]) -> list[str]:
    return tokens(" ".join((title or "", text, *tags)))

"""The benchmark data sets, read into the notes and searches the server is given.

LoCoMo (``data/locomo``): one JSON object per conversation (the public per-file format),
or the original ``locomo10.json``, a list of ``{"sample_id", "conversation": {...}, "qa"}``.
Each dialog turn becomes one note ``SPEAKER: TEXT`` (plus `` [shares a photo: CAPTION]``),
created at its session's date plus the turn's index in seconds (so turns keep their order),
with ``metadata {"diaId"}``. Each question of categories 1-4 whose evidence names turns of
the conversation becomes one search.

Paraphrase (``data/paraphrase/set.json``): notes, queries with a target note index,
cross-language queries, and the index range of each language's targets.

LoCoMo is read from ``../shared/data/locomo`` when it exists, else from what
``bench.fetch_data`` wrote (``bench/data/locomo/dev``: the same five conversations).
``data_digest`` is the sha256 of the data a benchmark read, which every result file states.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from bench.client import REPO

SHARED_LOCOMO = (REPO / ".." / "shared" / "data" / "locomo").resolve()
FETCHED_LOCOMO = REPO / "bench" / "data" / "locomo" / "dev"
LOCOMO_DIR = SHARED_LOCOMO if SHARED_LOCOMO.is_dir() or not FETCHED_LOCOMO.is_dir() else FETCHED_LOCOMO
PARAPHRASE_SET = (REPO / ".." / "shared" / "data" / "paraphrase" / "set.json").resolve()
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

_SESSION = re.compile(r"^session_(\d+)$")
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M%p on %d %B, %Y")


def data_digest(path: Path) -> dict[str, object]:
    """The sha256 of each JSON file a benchmark reads (a file, or the ``*.json`` of a
    directory) and ``sha256``: one hash of them all (of the lines ``NAME HASH``, sorted by
    name), the same wherever the files are."""
    path = Path(path)
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    each = {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    summary = "".join(f"{name} {digest}\n" for name, digest in sorted(each.items()))
    return {"path": str(path), "files": each, "sha256": hashlib.sha256(summary.encode()).hexdigest()}


@dataclass
class Question:
    text: str
    evidence: frozenset[str]
    category: int


@dataclass
class Conversation:
    name: str
    notes: list[dict[str, Any]] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    @property
    def project(self) -> str:
        return f"locomo-{self.name}"


def parse_session_date(raw: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> 2023-05-08T13:56:00Z."""
    cleaned = " ".join(raw.replace("\u202f", " ").split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    raise ValueError(f"unrecognized LoCoMo session date {raw!r}")


def _iso(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def _records(path: Path) -> Iterator[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    files = sorted(path.glob("*.json"), key=lambda p: (len(p.stem), p.stem)) if path.is_dir() else [path]
    for file in files:
        data = json.loads(file.read_text())
        if isinstance(data, list):  # the original locomo10.json
            for number, item in enumerate(data):
                yield str(item.get("sample_id", number)), item["conversation"], item.get("qa", [])
        elif "conversation" in data:
            yield str(data.get("sample_id", file.stem)), data["conversation"], data.get("qa", [])
        else:
            yield file.stem, data, data.get("qa", [])


def _conversation(name: str, dialog: dict[str, Any], qa: list[dict[str, Any]]) -> Conversation:
    conversation = Conversation(name)
    sessions = sorted((int(m.group(1)), key) for key in dialog if (m := _SESSION.match(key)))
    for number, key in sessions:
        turns = dialog[key] or []
        started = parse_session_date(dialog[f"session_{number}_date_time"])
        for index, turn in enumerate(turns):
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            conversation.notes.append(
                {
                    "projectId": conversation.project,
                    "groupId": "dialog",
                    "text": text,
                    "createdAt": _iso(started + timedelta(seconds=index)),
                    "metadata": {"diaId": turn["dia_id"]},
                }
            )
    known = {n["metadata"]["diaId"] for n in conversation.notes}
    for item in qa:
        category = int(item.get("category", 0))
        if category not in CATEGORIES:
            continue
        evidence = {e.strip() for raw in item.get("evidence", []) for e in re.split(r"[;,]", raw) if e.strip()}
        evidence &= known
        if evidence:
            conversation.questions.append(Question(str(item["question"]), frozenset(evidence), category))
    return conversation


def load_locomo(path: Path = LOCOMO_DIR) -> list[Conversation]:
    return [_conversation(name, dialog, qa) for name, dialog, qa in _records(Path(path))]


@dataclass
class ParaphraseSet:
    notes: list[str]
    queries: list[tuple[str, int, str]]  # (query, target note index, language of the target or "cross")


def load_paraphrase(path: Path = PARAPHRASE_SET) -> ParaphraseSet:
    data = json.loads(Path(path).read_text())
    ranges = data.get("languages", {})

    def language(target: int) -> str:
        return next((lang for lang, (lo, hi) in ranges.items() if lo <= target < hi), "other")

    queries = [(q["query"], int(q["target"]), language(int(q["target"]))) for q in data["queries"]]
    queries += [(q["query"], int(q["target"]), "cross") for q in data.get("cross_lingual", [])]
    return ParaphraseSet(list(data["notes"]), queries)

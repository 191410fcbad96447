"""Whether a final state is one that a history of acknowledged operations explains.

A history is a list of operations, each ``{"client", "op", "args", "invoke", "complete",
"result", "error"}`` (``invoke``/``complete`` in ns of one machine-wide monotonic clock;
``error`` the JSON-RPC code, None when the answer was a result, ``"transport"`` when no answer
came: such an operation may or may not have taken effect). ``op`` is one of ``add``
(args ``text, tags, title``), ``update`` (``id, patch``), ``delete`` (``id``), ``link`` and
``unlink`` (``from, to, relation``), ``global`` (``key, value``). Every written value is
unique in the history, so the value read names the write that put it there.

The state is ``{"notes": {id: {"text", "tags", "title"} | None}, "links": [[from, to, relation]],
"globals": {key: value | None}}``, read after every client finished.

The rules, in the manner of Elle and Knossos but for registers only (each note field, each
link's presence and each global is a register; a note's existence too):

* ``resurrected``: a note whose delete was acknowledged is present.
* ``lost_note``: a note an add acknowledged (its own id, or the holder of a duplicate) is
  absent, and no delete of it was acknowledged or may have happened.
* ``dedup_onto_deleted``: an add answered ``duplicate`` with a holder whose delete had been
  acknowledged before the add began.
* ``false_not_found``: an update or link answered -32004 for a note that no delete had
  removed when it answered (no delete of it acknowledged, or begun, before then).
* ``unexplained_value``: a field holds a value no write of it wrote.
* ``lost_update``: a field holds the value of write W although another acknowledged write W'
  of that field began after W completed (W' should have won, or a later one).
* ``dangling_link``: a link of a note that is absent.
* ``unexplained_link`` / ``lost_link_change``: as for fields, a link's presence being the
  register (link writes present, unlink absent, nothing at all absent).
* ``unexplained_global`` / ``lost_global``: as for fields, per global key.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

NOT_FOUND = -32004
FIELDS = ("text", "tags", "title")
BEFORE_ALL = {"invoke": -1, "complete": -1, "error": None}  # the initial value, written before all


def check(history: list[dict[str, Any]], state: dict[str, Any]) -> list[dict[str, Any]]:
    """Every anomaly of ``state`` against ``history`` (empty: explained)."""
    notes, anomalies = state["notes"], []
    acked = [op for op in history if op["error"] is None]
    maybe = [op for op in history if op["error"] is None or op["error"] == "transport"]
    deletes_ok = _by_id(op for op in acked if op["op"] == "delete")
    deletes_maybe = _by_id(op for op in maybe if op["op"] == "delete")

    def report(kind: str, subject: Any, **detail: Any) -> None:
        anomalies.append({"kind": kind, "subject": subject, **detail})

    for op in acked:
        if op["op"] != "add":
            continue
        holder = op["result"]["id"]
        if notes.get(holder) is None and holder not in deletes_maybe:
            report("lost_note", holder, add=op)
        if op["result"].get("duplicate"):
            earlier = [d for d in deletes_ok.get(holder, []) if d["complete"] < op["invoke"]]
            if earlier:
                report("dedup_onto_deleted", holder, add=op, delete=earlier[0])
    for note_id, ops in deletes_ok.items():
        if notes.get(note_id) is not None:
            report("resurrected", note_id, delete=ops[0])
    for op in history:
        if op["op"] in ("update", "link") and op["error"] == NOT_FOUND:
            ids = [op["args"]["id"]] if op["op"] == "update" else [op["args"]["from"], op["args"]["to"]]
            if not any(d["invoke"] < op["complete"] for i in ids for d in deletes_maybe.get(i, [])):
                report("false_not_found", ids, op=op)
    for note_id, fields in notes.items():
        if fields is None:
            continue
        writes = _field_writes(maybe, note_id)
        for field in FIELDS:
            _register(report, f"{note_id}.{field}", fields[field], writes[field], "unexplained_value", "lost_update")
    live = {i for i, f in notes.items() if f is not None}
    stored_links = {tuple(link) for link in state["links"]}
    for link in stored_links:
        if link[0] not in live or link[1] not in live:
            report("dangling_link", list(link))
    for key in _link_keys(history):
        if key[0] in live and key[1] in live:
            writes = [(op, op["op"] == "link") for op in maybe if op["op"] in ("link", "unlink") and _key(op) == key]
            _register(report, list(key), key in stored_links, [(BEFORE_ALL, False), *writes], "unexplained_link", "lost_link_change")
    for key, value in state["globals"].items():
        writes = [(op, op["args"]["value"]) for op in maybe if op["op"] == "global" and op["args"]["key"] == key]
        _register(report, key, value, [(BEFORE_ALL, None), *writes], "unexplained_global", "lost_global")
    return anomalies


def _register(report, subject: Any, final: Any, writes: list[tuple[dict, Any]], unexplained: str, lost: str) -> None:
    """``final`` must be the value of a write W that no acknowledged write of another value
    began after W completed."""
    matching = [op for op, value in writes if value == final]
    if not matching:
        report(unexplained, subject, value=final)
        return
    for op in matching:
        later = [w for w, value in writes if value != final and w["error"] is None and w["invoke"] > op["complete"]]
        if not later:
            return
    report(lost, subject, value=final, written_by=matching[-1], overwritten_by=later[0])


def _field_writes(ops: list[dict[str, Any]], note_id: str) -> dict[str, list[tuple[dict, Any]]]:
    writes: dict[str, list[tuple[dict, Any]]] = {field: [] for field in FIELDS}
    for op in ops:
        if op["op"] == "add" and op["result"] and op["result"]["id"] == note_id and not op["result"].get("duplicate"):
            for field in FIELDS:
                writes[field].append((op, op["args"].get(field)))
        elif op["op"] == "update" and op["args"]["id"] == note_id:
            for field, value in op["args"]["patch"].items():
                writes[field].append((op, value))
    return writes


def _by_id(ops: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for op in ops:
        found.setdefault(op["args"]["id"], []).append(op)
    return found


def _key(op: dict[str, Any]) -> tuple[str, str, str]:
    return (op["args"]["from"], op["args"]["to"], op["args"]["relation"])


def _link_keys(history: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {_key(op) for op in history if op["op"] in ("link", "unlink")}

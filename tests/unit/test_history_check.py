"""The history checker (``bench.history_check``) flags what acknowledged operations cannot
explain, and nothing else."""

from __future__ import annotations

from typing import Any

from bench.history_check import check

A = "note-a"
B = "note-b"


def op(kind: str, invoke: int, complete: int, error: Any = None, result: Any = None, **args: Any) -> dict[str, Any]:
    return {"client": 0, "op": kind, "args": args, "invoke": invoke, "complete": complete, "error": error, "result": result}


def added(note_id: str, at: int = 0, **fields: Any) -> dict[str, Any]:
    args = {"text": f"text of {note_id}", "tags": [], "title": None, **fields}
    return op("add", at, at + 1, result={"id": note_id}, **args)


def state(notes: dict[str, Any], links=(), globals_=None) -> dict[str, Any]:
    return {"notes": notes, "links": [list(link) for link in links], "globals": globals_ or {}}


def fields(note_id: str, **changes: Any) -> dict[str, Any]:
    return {"text": f"text of {note_id}", "tags": [], "title": None, **changes}


def kinds(anomalies: list[dict[str, Any]]) -> list[str]:
    return sorted(a["kind"] for a in anomalies)


def test_a_state_the_history_explains_has_no_anomaly() -> None:
    history = [
        added(A), added(B),
        op("update", 10, 20, id=A, patch={"title": "t1"}),
        op("update", 15, 25, id=A, patch={"title": "t2"}),  # concurrent with the first: either may win
        op("link", 30, 31, **{"from": A, "to": B, "relation": "relates_to"}),
        op("global", 40, 41, key="global.k", value=1),
    ]  # fmt: skip
    final = state({A: fields(A, title="t1"), B: fields(B)}, [(A, B, "relates_to")], {"global.k": 1})
    assert check(history, final) == []


def test_a_deleted_note_that_came_back_is_resurrected() -> None:
    history = [added(A), op("delete", 10, 11, id=A), op("update", 5, 30, id=A, patch={"text": "new"})]
    assert "resurrected" in kinds(check(history, state({A: fields(A, text="new")})))


def test_a_field_change_reverted_by_an_older_write_is_a_lost_update() -> None:
    history = [added(A), op("update", 10, 11, id=A, patch={"tags": ["x"]})]
    assert kinds(check(history, state({A: fields(A)}))) == ["lost_update"]


def test_a_note_gone_without_a_delete_is_lost() -> None:
    assert kinds(check([added(A)], state({A: None}))) == ["lost_note"]


def test_an_update_answered_not_found_with_no_delete_is_a_false_not_found() -> None:
    history = [added(A), op("update", 10, 11, error=-32004, id=A, patch={"title": "x"})]
    assert kinds(check(history, state({A: fields(A)}))) == ["false_not_found"]


def test_an_update_answered_not_found_after_a_delete_began_is_explained() -> None:
    history = [added(A), op("delete", 9, 12, id=A), op("update", 10, 11, error=-32004, id=A, patch={"title": "x"})]
    assert check(history, state({A: None})) == []


def test_a_link_of_a_deleted_note_dangles_and_an_unlinked_link_that_stays_is_lost() -> None:
    link = {"from": A, "to": B, "relation": "relates_to"}
    history = [added(A), added(B), op("link", 10, 11, **link), op("unlink", 20, 21, **link)]
    assert kinds(check(history, state({A: fields(A), B: fields(B)}, [(A, B, "relates_to")]))) == ["lost_link_change"]
    history.append(op("delete", 30, 31, id=B))
    assert "dangling_link" in kinds(check(history, state({A: fields(A), B: None}, [(A, B, "relates_to")])))


def test_a_value_no_write_wrote_is_unexplained() -> None:
    history = [added(A), op("global", 1, 2, key="global.k", value=1)]
    found = kinds(check(history, state({A: fields(A, title="forged")}, (), {"global.k": 2})))
    assert found == ["unexplained_global", "unexplained_value"]


def test_a_duplicate_answered_with_a_note_deleted_before_the_add_began() -> None:
    history = [added(A), op("delete", 5, 6, id=A), op("add", 10, 11, result={"id": A, "duplicate": True}, text="text of note-a")]
    assert "dedup_onto_deleted" in kinds(check(history, state({A: None})))

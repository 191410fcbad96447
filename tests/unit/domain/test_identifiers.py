from __future__ import annotations

import pytest
from hypothesis import given

from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey, GroupId, Namespace, NoteId, is_path_like
from tests.strategies import group_ids, not_group_ids


@given(group_ids)
def test_group_id_accepts_every_string_of_the_allowed_characters_unchanged(raw: str) -> None:
    assert GroupId(raw).value == raw


@given(not_group_ids)
def test_group_id_refuses_any_other_character(raw: str) -> None:
    with pytest.raises(InvalidValue, match=r"GroupId must match \[A-Za-z0-9_-\]\+"):
        GroupId(raw)


def test_group_id_is_case_sensitive() -> None:
    assert GroupId("Feature-1") != GroupId("feature-1")


def test_group_id_error_names_type_rule_and_value() -> None:
    with pytest.raises(InvalidValue) as caught:
        GroupId("a b")
    assert str(caught.value) == "GroupId must match [A-Za-z0-9_-]+ (got 'a b')"


@pytest.mark.parametrize("raw", ["/x", "~", "~/p", "~bob/p", "./a", "../a", ".", ".."])
def test_path_like_strings(raw: str) -> None:
    assert is_path_like(raw)


@pytest.mark.parametrize("raw", ["my-app", "github.com/acme/api", "src/app", ".hidden", "a~b"])
def test_opaque_strings(raw: str) -> None:
    assert not is_path_like(raw)


def test_canonical_project_id_refuses_relative_paths_and_blank() -> None:
    for raw in ("./a", "", " padded ", "tab\there"):
        with pytest.raises(InvalidValue):
            CanonicalProjectId(raw)


def test_note_id_must_be_a_canonical_uuid() -> None:
    assert NoteId(str(NoteId.new())).value
    with pytest.raises(InvalidValue):
        NoteId("not-a-uuid")
    with pytest.raises(InvalidValue):
        NoteId("6F1D2C8E-3B7A-5E41-9A0C-2D4B8E1F7A53")


@pytest.mark.parametrize("raw", ["global.memory.embedder.provider", "global.x", "global.a-b.c_d"])
def test_global_keys(raw: str) -> None:
    assert GlobalKey(raw).value == raw


@pytest.mark.parametrize("raw", ["memory.x", "global", "global.", "global..x", "global.a b", "Global.x"])
def test_global_key_rules(raw: str) -> None:
    with pytest.raises(InvalidValue, match="GlobalKey"):
        GlobalKey(raw)


def test_global_entry_id_is_stable_per_project_and_key() -> None:
    key = GlobalKey("global.project.conventions")
    a, b = CanonicalProjectId("a"), CanonicalProjectId("b")
    assert key.entry_id(a) == key.entry_id(a)
    assert key.entry_id(a) != key.entry_id(b)


def test_namespace_round_trips_through_its_text_even_with_colons_in_the_model() -> None:
    for ns in (Namespace("local", "all-MiniLM-L6-v2", 384), Namespace("ollama", "llama3:8b", 4096)):
        assert Namespace.parse(str(ns)) == ns


def test_namespace_refuses_a_bad_dimension() -> None:
    with pytest.raises(InvalidValue):
        Namespace("openai", "m", 0)

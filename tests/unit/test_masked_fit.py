"""``bench.masked_fit``'s masking: a note with its values taken out, to embed its subject and frame alone."""

from __future__ import annotations

from bench.masked_fit import masked


def test_each_run_of_values_is_removed_or_replaced_by_one_word() -> None:
    text = "The vision pipeline runs at 30 Hz on Ubuntu 22.04."
    assert masked(text, "") == "The vision pipeline runs at on ."
    assert masked(text, "something") == "The vision pipeline runs at something on something."
    assert masked(text, None) == "The vision pipeline runs at number on name."  # the kind of the run's first value


def test_a_text_without_values_or_of_values_only_stays_as_it_is() -> None:
    assert masked("The client uses httpx.", "") == "The client uses httpx."  # a tool in lower case is no value
    assert masked("PostgreSQL 16", "") == "PostgreSQL 16"  # nothing would be left

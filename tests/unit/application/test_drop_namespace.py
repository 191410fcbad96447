"""Dropping a namespace: only one that is no note's home, never the current one."""

from __future__ import annotations

import pytest

from local_mcp_memory.application.drop_namespace import DropNamespace, drop_namespace
from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.reembed import Reembed, reembed
from local_mcp_memory.application.services import Services
from tests.unit.steps import LOCAL, OLLAMA, add, switch_to_ollama


def test_dropping_a_namespace_that_is_still_home_is_refused(services: Services) -> None:
    add(services, "a note")
    switch_to_ollama(services)
    with pytest.raises(InvalidRequest, match="still the home of 1 notes"):
        drop_namespace(DropNamespace(LOCAL), services)
    assert services.store.namespaces() == {LOCAL: 1}


def test_dropping_an_old_namespace_after_reembed_removes_its_vectors(services: Services) -> None:
    add(services, "a note")
    switch_to_ollama(services)
    reembed(Reembed(), services)
    assert drop_namespace(DropNamespace(LOCAL), services) == 1
    assert services.store.namespaces() == {OLLAMA: 1}
    assert drop_namespace(DropNamespace(LOCAL), services) == 0


def test_dropping_the_current_namespace_is_refused(services: Services) -> None:
    add(services, "a note")
    with pytest.raises(InvalidRequest, match="is the current namespace"):
        drop_namespace(DropNamespace(LOCAL), services)

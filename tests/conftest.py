"""The ``slow`` mark: what a quick local run (``pytest -m "not slow"``) leaves out, and why.

CI runs everything (``bash scripts/test``). A test is slow when it starts something heavy
or repeats something many times: a PostgreSQL server, a browser, the Claude Code CLI or the
MCP conformance suite on Node.js, a wheel build, kill -9 and damage sweeps, fuzzing, big data
through real processes. Whole rooms of tests/integration/ and whole modules are marked here,
in two lists, so that a test added to one of them is marked too; a single slow test elsewhere
carries ``@pytest.mark.slow`` itself.
"""

from __future__ import annotations

import pytest

SLOW_ROOMS = {
    # every test there starts the real Claude Code CLI, or the hooks as it runs them: a process
    # per hook, the background service, twenty at once, a service killed mid-request (their
    # logic: tests/unit/application/)
    "claude_code",
    # every test there needs a real PostgreSQL server
    "postgres_store",
}

SLOW_MODULES = {
    # kill -9 at random instants, many cycles
    "test_faiss_store_durability.py",
    # sweeps and fuzzing: hundreds of damaged stores, thousands of mutated requests
    "test_store_damage_sweep.py",
    "test_fuzz_requests.py",
    "test_transport_robustness.py",
    # a real browser, real clients on Node.js
    "test_dashboard_browser.py",
    "test_mcp_conformance.py",
    "test_mcp_sdk_clients.py",
    "test_mcp_old_clients.py",
    # a wheel built from the tree
    "test_build_default_transport.py",
    # big data through real processes: thousands of notes, a partition trained on 32,768
    # vectors, two servers writing 400 notes each (also during a compaction)
    "test_lifecycle_store.py",
    "test_faiss_store_partition.py",
    "test_stdio_shared_data_dir.py",
    # the data commands and the stdio server end to end with the local model, restarts and
    # signals (their use cases are covered quickly by tests/unit/application/, tests/contracts/
    # and tests/unit/entrypoints/methods/)
    "test_sync_cli.py",
    "test_lifecycle_cli.py",
    "test_curation_stdio.py",
    "test_knowledge_stdio.py",
    "test_newer_wins_stdio.py",
    "test_context_cli.py",
    # histories of concurrent clients on several real servers, checked, restarted
    "test_history.py",
    # the multilingual model: ten times slower than MiniLM
    "test_multilingual_embedder.py",
}

SLOW_PARAMETERS = {
    # the multilingual model in the embedder contract: ten times slower than MiniLM
    "test_embedder_contract.py": "e5",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)


def is_slow(item: pytest.Item) -> bool:
    if item.path.name in SLOW_MODULES or item.path.parent.name in SLOW_ROOMS:
        return True
    params = getattr(getattr(item, "callspec", None), "params", {})
    if SLOW_PARAMETERS.get(item.path.name) in params.values():
        return True
    # a PostgreSQL server: the session's (``postgres``, ``postgres_url``) or the store
    # contract's PostgreSQL parameter
    return bool({"postgres", "postgres_url"} & set(getattr(item, "fixturenames", ()))) or "postgresql" in params.values()

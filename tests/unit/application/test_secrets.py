from local_mcp_memory.application.secrets import scrub
from tests.secrets_corpus import corpus_text, secret_values, surviving


def test_no_secret_of_the_corpus_survives_scrubbing() -> None:
    assert len(secret_values()) >= 60
    assert surviving(scrub(corpus_text())) == []


def test_scrubbing_scrubbed_text_changes_nothing() -> None:
    once = scrub(corpus_text())
    assert scrub(once) == once


def test_the_names_around_secrets_stay_so_the_text_still_says_what_was_done() -> None:
    text = scrub("export DATABASE_PASSWORD=hunter2hunter2\ncurl -H 'Authorization: Bearer abcdefghijklmnop' https://x.dev")
    assert "export DATABASE_PASSWORD=***" in text
    assert "Authorization: ***" in text
    assert "https://x.dev" in text


def test_ordinary_development_text_is_left_alone() -> None:
    text = (
        "git commit -m 'Fix the login redirect'\n"
        "[main 3f2a9c1] Fix the login redirect\n"
        "commit 8c1e6b0e3f1d4a3b9d6c2e1f0a9b8c7d6e5f4a3b\n"
        "Edited /home/dev/projects/webApp2/src/components/LoginForm.tsx\n"
        "pytest tests/unit -q -x\n"
        "python -m pip install -e '.[test]'\n"
        "The cache key is built from the user id and the locale.\n"
    )
    assert scrub(text) == text

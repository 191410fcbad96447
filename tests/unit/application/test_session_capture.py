"""Session digests (application/session_digest.py, capture_session.py) and recall for a
prompt (application/recall.py): what a digest holds, how it stays bounded and secret-free,
one note per session updated in place, and what recall prints."""

from __future__ import annotations

from datetime import timedelta

import pytest

from local_mcp_memory.application.capture_session import CaptureSession, capture_session, session_digest_text, session_note_id
from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.recall import HEADER, RecallPrompt, recall
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.session_digest import Answer, Command, Digest, DigestLimits, FileChange, Prompt, digest
from local_mcp_memory.domain.identifiers import CanonicalProjectId, NoteId
from local_mcp_memory.domain.note import LASTING
from tests.fakes.manual_clock import ManualClock
from tests.secrets_corpus import corpus_text, surviving
from tests.unit.steps import add, rpc

SESSION = [
    Prompt("Fix the login redirect after OAuth"),
    FileChange("/repo/src/login.py"),
    FileChange("/repo/src/login.py"),
    FileChange("/repo/tests/test_login.py"),
    Command("pytest -q", failed=True, exit_code=1, output="1 failed"),
    Command("pytest -q", failed=False, output="3 passed"),
    Command("git commit -am 'Fix the login redirect'", failed=False, output="[main 3f2a9c1] Fix the login redirect\n 2 files changed"),
    Command("sleep 100"),
    Answer("I fixed the login redirect: the callback now keeps the next parameter."),
]


def made(events: list, **limits: int) -> Digest:
    result = digest(events, DigestLimits(**limits), root="/repo")
    assert result is not None
    return result


def commands(text: str) -> list[str]:
    """Each line of ``text`` as a command of its own, but a private key's lines together (as
    a heredoc would carry them)."""
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if inside:
            out[-1] += "\n" + line
        else:
            out.append(line)
        if "-----BEGIN" in line and "-----END" not in line:
            inside = True
        if "-----END" in line:
            inside = False
    return out


def test_a_digest_lists_prompts_files_commands_with_outcomes_commits_and_the_last_answer() -> None:
    d = made(SESSION)
    assert "- Fix the login redirect after OAuth" in d.text
    assert "Files changed: src/login.py (2 edits), tests/test_login.py" in d.text
    assert "`pytest -q` → exit 1" in d.text and "`pytest -q` → ok" in d.text
    assert "`sleep 100` → no result" in d.text
    assert "- 3f2a9c1 Fix the login redirect" in d.text
    assert d.text.endswith("Last answer: I fixed the login redirect: the callback now keeps the next parameter.")
    assert (d.prompts, d.commands, d.failed_commands, d.files, d.commits) == (1, 4, 1, 2, 1)


def test_a_failed_git_commit_is_no_commit() -> None:
    d = made([Command("git commit -m x", failed=True, exit_code=1, output="[main 1234567] x")])
    assert d.commits == 0


def test_a_session_with_nothing_done_has_no_digest() -> None:
    assert digest([Answer("hello")]) is None


def test_a_long_session_keeps_its_first_and_last_prompts_within_the_bound() -> None:
    events = [Prompt(f"prompt number {i} " + "x" * 500) for i in range(1000)]
    events += [Command(f"make step-{i}", failed=False) for i in range(1000)]
    d = made(events, chars=4000)
    assert len(d.text) <= 4000
    assert "prompt number 0 " in d.text and "prompt number 999 " in d.text
    assert "… 988 more …" in d.text
    assert d.prompts == 1000


def test_the_digest_is_cut_in_the_middle_when_still_too_long() -> None:
    events = [Prompt("p" * 240) for _ in range(12)] + [Command("c" * 160, failed=False) for _ in range(16)]
    events.append(Answer("the end of it all"))
    d = made(events, chars=1000)
    assert len(d.text) <= 1000
    assert "… (cut) …" in d.text and d.text.endswith("the end of it all")


def test_no_secret_reaches_a_digest_from_prompts_commands_paths_or_answers() -> None:
    secrets = corpus_text()
    events = [Prompt(secrets), Answer(secrets), FileChange("/repo/AKIAABCDEFGHIJKLMNOP.txt")]
    events += [Command(line, failed=False, output=line) for line in commands(secrets)]
    d = made(events, chars=100_000, prompt_chars=100_000, command_chars=100_000, answer_chars=100_000, kept_commands=1000)
    assert surviving(d.text) == []
    assert surviving(d.title) == []


def test_a_session_is_one_note_updated_in_place_keeping_its_creation_time(services: Services, clock: ManualClock) -> None:
    first = capture_session(CaptureSession("/repo", "s-1", made(SESSION[:2])), services)
    clock.advance(minutes=5)
    again = capture_session(CaptureSession("/repo", "s-1", made(SESSION)), services)
    assert first.id == again.id and again.written
    notes = list(services.store.iter_notes())
    assert len(notes) == 1
    note = notes[0].note
    assert note.group_id.value == "session" and note.source == "claude-code:session:s-1"
    assert note.metadata["sessionId"] == "s-1" and note.metadata["commits"] == 1
    assert note.created_at == clock.now() - timedelta(minutes=5)
    assert note.expires_at == clock.now() + timedelta(days=90)
    assert "3f2a9c1" in note.text


def test_an_unchanged_digest_writes_nothing(services: Services) -> None:
    capture_session(CaptureSession("/repo", "s-1", made(SESSION)), services)
    assert not capture_session(CaptureSession("/repo", "s-1", made(SESSION)), services).written


def test_sessions_of_other_ids_or_projects_are_other_notes(services: Services) -> None:
    ids = {capture_session(CaptureSession(p, s, made(SESSION)), services).id for p, s in [("/a", "1"), ("/a", "2"), ("/b", "1")]}
    assert len(ids) == 3


def test_a_digest_without_expiry_is_kept(services: Services) -> None:
    done = capture_session(CaptureSession("/repo", "s-1", made(SESSION), expiry=None), services)
    assert services.store.get(done.id).note.expires_at is None


def test_the_digest_so_far_is_read_back_by_session(services: Services, clock: ManualClock) -> None:
    capture_session(CaptureSession("/repo", "s-1", made(SESSION), expiry=timedelta(days=1)), services)
    assert "3f2a9c1" in session_digest_text("/repo", "s-1", services)
    assert session_digest_text("/repo", "s-2", services) is None
    clock.advance(days=2)
    assert session_digest_text("/repo", "s-1", services) is None


def test_session_note_ids_are_stable_uuids() -> None:
    a = session_note_id(CanonicalProjectId("/repo"), "abc")
    assert a == session_note_id(CanonicalProjectId("/repo"), "abc")
    assert NoteId(a.value) == a


def test_recall_shows_each_note_above_the_floor_with_its_id(services: Services) -> None:
    first = add(services, "We deploy with fly deploy from main.", project="/repo", title="Deploy")
    text = recall(RecallPrompt("/repo", "how do we deploy", floor=0.0), services)
    assert text.startswith(HEADER + "\n")
    assert f"- [{first.value}] Deploy: We deploy with fly deploy from main." in text


def test_recall_prints_nothing_when_no_note_reaches_the_floor(services: Services) -> None:
    add(services, "We deploy with fly deploy from main.", project="/repo")
    assert recall(RecallPrompt("/repo", "how do we deploy", floor=1.01), services) == ""
    assert recall(RecallPrompt("/empty", "how do we deploy", floor=0.0), services) == ""


def test_recall_stays_within_its_budget_cutting_long_notes(services: Services) -> None:
    for i in range(5):
        add(services, f"note {i} " + "word " * 400, project="/repo")
    text = recall(RecallPrompt("/repo", "word", max_chars=900, floor=0.0), services)
    assert 0 < len(text) <= 900
    assert "…" in text


def test_recall_never_shows_the_session_its_own_digest(services: Services) -> None:
    capture_session(CaptureSession("/repo", "s-1", made(SESSION)), services)
    assert recall(RecallPrompt("/repo", "login redirect", floor=0.0, session_id="s-1"), services) == ""
    assert "3f2a9c1" in recall(RecallPrompt("/repo", "login redirect", floor=0.0, session_id="s-2"), services)


def test_recall_refuses_a_budget_too_small_to_show_a_note() -> None:
    with pytest.raises(InvalidRequest):
        RecallPrompt("/repo", "x", max_chars=10)


def test_a_session_digest_raised_to_lasting_importance_keeps_no_default_expiry(services: Services) -> None:
    first = capture_session(CaptureSession("proj", "s-lasting", made([Prompt("first prompt")])), services)
    assert services.store.get(first.id).note.expires_at is not None
    rpc(services, "memory.update", {"id": first.id.value, "patch": {"importance": LASTING}})
    capture_session(CaptureSession("proj", "s-lasting", made([Prompt("first prompt"), Prompt("second prompt")])), services)
    kept = services.store.get(first.id).note
    assert kept.importance == LASTING and kept.expires_at is None

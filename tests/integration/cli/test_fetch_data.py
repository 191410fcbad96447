"""bench.fetch_data against a real HTTP server on 127.0.0.1 serving a locomo10.json rebuilt
from ../shared/data/locomo (never the network): the sha256 gate, the split into the shared
layout, and the refusals."""

from __future__ import annotations

import copy
import hashlib
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import fetch_data
from bench.datasets import LOCOMO_DIR, data_digest, load_locomo

DEV = ("26", "30", "41", "42", "43")


def as_sample(name: str, conversation_file: dict) -> dict:
    """The inverse of ``fetch_data.conversation_file``: a sample as ``locomo10.json`` holds it."""
    parts: dict[str, dict] = {"conversation": {}, "event_summary": {}, "observation": {}, "session_summary": {}}
    for key, value in conversation_file.items():
        if key == "qa":
            continue
        if key.startswith("events_session_"):
            parts["event_summary"][key] = value
        elif key.endswith("_observation"):
            parts["observation"][key] = value
        elif key.endswith("_summary"):
            parts["session_summary"][key] = value
        else:
            parts["conversation"][key] = value
    return {"qa": conversation_file["qa"], **parts, "sample_id": f"conv-{name}"}


@pytest.fixture(scope="module")
def locomo10() -> bytes:
    shared = {name: json.loads((LOCOMO_DIR / f"{name}.json").read_text()) for name in DEV}
    unseen = copy.deepcopy(shared["26"])
    unseen["speaker_a"] = "Someone Else"
    samples = [as_sample(name, shared[name]) for name in DEV] + [as_sample("44", unseen)]
    return json.dumps(samples, indent=2).encode()


class Served:
    def __init__(self) -> None:
        self.body = b""
        self.requests = 0


@pytest.fixture
def server(locomo10: bytes) -> Iterator[tuple[str, Served]]:
    served = Served()
    served.body = locomo10

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            served.requests += 1
            if self.path != "/data/locomo10.json":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(served.body)))
            self.end_headers()
            self.wfile.write(served.body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/data/locomo10.json", served
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_checked_download_is_split_into_the_shared_layout_byte_for_byte(
    server: tuple[str, Served], locomo10: bytes, tmp_path: Path
) -> None:
    url, served = server
    digest = hashlib.sha256(locomo10).hexdigest()
    written = fetch_data.fetch(tmp_path, url, digest)
    assert served.requests == 1 and written["sha256"] == digest and written["differ"] == []
    assert (tmp_path / "locomo10.json").read_bytes() == locomo10
    for name in DEV:
        mine = (tmp_path / "locomo" / "dev" / f"{name}.json").read_bytes()
        assert mine == (LOCOMO_DIR / f"{name}.json").read_bytes(), name
    assert sorted(p.name for p in (tmp_path / "locomo" / "test").iterdir()) == ["44.json"]
    # the benchmarks read the fetched dev split as they read the shared copy, with the same data hash
    assert data_digest(tmp_path / "locomo" / "dev")["sha256"] == data_digest(LOCOMO_DIR)["sha256"]
    fetched = load_locomo(tmp_path / "locomo" / "dev")
    assert [(c.name, len(c.notes), len(c.questions)) for c in fetched] == [
        (c.name, len(c.notes), len(c.questions)) for c in load_locomo(LOCOMO_DIR)
    ]


def test_a_download_with_another_sha256_is_refused_and_nothing_is_written(
    server: tuple[str, Served], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = server
    dest = tmp_path / "data"
    with pytest.raises(fetch_data.FetchFailed, match="sha256"):
        fetch_data.fetch(dest, url, fetch_data.LOCOMO_SHA256)
    assert not dest.exists()
    assert fetch_data.main(["--dest", str(dest), "--url", url]) == 1
    assert "expected " + fetch_data.LOCOMO_SHA256 in capsys.readouterr().err
    assert not dest.exists()


def test_a_changed_dev_conversation_is_reported_and_a_missing_one_refused(
    server: tuple[str, Served], locomo10: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, served = server
    samples = json.loads(locomo10)
    samples[0]["qa"][0]["answer"] = "another answer"
    served.body = json.dumps(samples).encode()
    assert fetch_data.main(["--dest", str(tmp_path / "a"), "--url", url, "--sha256", hashlib.sha256(served.body).hexdigest()]) == 0
    assert "conversations 26 differ" in capsys.readouterr().err
    served.body = json.dumps(samples[1:]).encode()
    with pytest.raises(fetch_data.FetchFailed, match="conversations 26 are not in"):
        fetch_data.fetch(tmp_path / "b", url, hashlib.sha256(served.body).hexdigest())
    assert not (tmp_path / "b").exists()


def test_what_is_not_the_locomo_file_is_refused(server: tuple[str, Served], tmp_path: Path) -> None:
    url, served = server
    with pytest.raises(fetch_data.FetchFailed, match="more than 100 bytes"):
        fetch_data.download(url, limit=100)
    for body in (b"\xff\xfe not json", b'{"a": 1}', b'[{"sample_id": "conv-x"}]'):
        served.body = body
        with pytest.raises(fetch_data.FetchFailed, match="expected shape|unexpected sample id"):
            fetch_data.fetch(tmp_path, url, hashlib.sha256(body).hexdigest())
    with pytest.raises(fetch_data.FetchFailed, match="cannot download"):
        fetch_data.fetch(tmp_path, url.replace("locomo10.json", "missing.json"), "0" * 64)
    assert not any(tmp_path.iterdir())


def test_a_destination_that_cannot_be_written_is_a_clear_refusal(
    server: tuple[str, Served], locomo10: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = server
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    digest = hashlib.sha256(locomo10).hexdigest()
    assert fetch_data.main(["--dest", str(blocked), "--url", url, "--sha256", digest]) == 1
    assert "cannot write under" in capsys.readouterr().err
    assert blocked.read_text() == "not a directory"

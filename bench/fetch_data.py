"""Download LoCoMo, check it, and lay it out as the benchmarks read it.

    .venv/bin/python -m bench.fetch_data [--dest bench/data] [--url URL] [--sha256 HEX]

Fetches ``locomo10.json`` of snap-research/locomo at a pinned commit (``LOCOMO_URL``, 2.8 MB,
the ten conversations of the paper) and refuses it unless its sha256 is ``LOCOMO_SHA256``;
nothing is written then. A checked file is kept as ``DEST/locomo10.json`` and split into one
file per conversation, in the layout of ``../shared/data/locomo``: ``DEST/locomo/dev/`` holds
conversations 26, 30, 41, 42 and 43 (the development split every figure of docs/benchmarks.md is
measured on; each is compared with the content hash of the shared copy, ``DEV_CONTENT``, and a
difference is reported),
``DEST/locomo/test/`` the other five, which no parameter was ever chosen on.

A conversation file is the sample's ``conversation`` object with its ``event_summary``, then
``qa``, then its ``observation`` and ``session_summary`` merged in at the top level, written
as ``json.dumps(..., indent=2)``, the layout of the shared copy. Then

    .venv/bin/python -m bench.locomo bench/data/locomo/dev
    .venv/bin/python -m bench.locomo bench/data/locomo/test

A run without ``../shared`` reads ``bench/data/locomo/dev`` by default (``bench.datasets``).
LoCoMo is CC BY-NC 4.0 (Maharana et al., ACL 2024): for research benchmarking; cite the paper.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: python bench/fetch_data.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import REPO

LOCOMO_COMMIT = "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376"
LOCOMO_URL = f"https://raw.githubusercontent.com/snap-research/locomo/{LOCOMO_COMMIT}/data/locomo10.json"
LOCOMO_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
LOCOMO_MAX_BYTES = 64 * 1024 * 1024
"""A download larger than this is refused before it is read whole (the file is 2,805,274 bytes)."""

DEV_CONTENT = {
    "26": "ec2fd8432ea196d34a08f94a6877c2bb373e5eb7403015fea9b079e92e376b88",
    "30": "40b66e67fd3f83642706c71b3a36c42e75425dc4f32618ad7c594f8918530b1c",
    "41": "be854d8408ccb833f057365dfa648d93f58e8f24bbc354c3a3395470027682ae",
    "42": "d30c88ec7da448e89b0070b256ec74cedb61d251f84019e2aafbcae2ca411c6e",
    "43": "ca1df4754f5d23af31370916e8cfcfda9aae32caa6460713a24a1423ea8e88bd",
}
"""``content_sha256`` of each development conversation as ``../shared/data/locomo`` holds it."""

DEFAULT_DEST = REPO / "bench" / "data"
TIMEOUT = 60.0


class FetchFailed(Exception):
    """The download failed, or what arrived is not the pinned file."""


def content_sha256(conversation: Any) -> str:
    """A hash of a conversation's JSON content, whatever its layout on disk: sorted keys, no spaces."""
    canonical = json.dumps(conversation, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def download(url: str, limit: int = LOCOMO_MAX_BYTES) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as response:  # noqa: S310 - a pinned https URL (or the user's)
            body = response.read(limit + 1)
    except OSError as exc:
        raise FetchFailed(f"cannot download {url}: {exc}") from exc
    if len(body) > limit:
        raise FetchFailed(f"{url} sent more than {limit} bytes: not the LoCoMo file")
    return body


def conversation_file(sample: dict[str, Any]) -> dict[str, Any]:
    """One sample of ``locomo10.json`` as one conversation file (the shared layout)."""
    merged = dict(sample["conversation"])
    merged.update(sample.get("event_summary") or {})
    merged["qa"] = sample.get("qa", [])
    merged.update(sample.get("observation") or {})
    merged.update(sample.get("session_summary") or {})
    return merged


def split(body: bytes) -> dict[str, dict[str, Any]]:
    """Conversation number (``conv-26`` -> ``26``) -> its file content."""
    try:
        samples = json.loads(body)
        out = {}
        for sample in samples:
            name = str(sample["sample_id"]).removeprefix("conv-")
            if not name.isdigit() or name in out:
                raise FetchFailed(f"unexpected sample id {sample['sample_id']!r}")
            out[name] = conversation_file(sample)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise FetchFailed(f"the LoCoMo file does not have the expected shape: {exc!r}") from exc
    return out


def fetch(dest: Path, url: str = LOCOMO_URL, sha256: str = LOCOMO_SHA256, dev: dict[str, str] = DEV_CONTENT) -> dict[str, Any]:
    """Download, check, split and write; what was written, with ``differ``: the development
    conversations whose content is not the one pinned in ``dev`` (the shared copy's).
    ``FetchFailed`` (nothing written) when the download fails, is larger than
    ``LOCOMO_MAX_BYTES``, its sha256 is not ``sha256``, or it lacks a conversation of ``dev``."""
    body = download(url)
    got = hashlib.sha256(body).hexdigest()
    if got != sha256:
        raise FetchFailed(f"{url}: sha256 {got}, expected {sha256}; nothing written")
    conversations = split(body)
    missing = sorted(set(dev) - set(conversations), key=int)
    if missing:
        raise FetchFailed(f"conversations {', '.join(missing)} are not in {url}")
    differ = [name for name, expected in dev.items() if content_sha256(conversations[name]) != expected]
    written: dict[str, Any] = {"source": url, "sha256": got, "bytes": len(body), "dev": {}, "test": {}, "differ": differ}
    _write(dest / "locomo10.json", body)
    for name in sorted(conversations, key=int):
        part = "dev" if name in dev else "test"
        raw = json.dumps(conversations[name], indent=2).encode()
        _write(dest / "locomo" / part / f"{name}.json", raw)
        written[part][name] = hashlib.sha256(raw).hexdigest()
    return written


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.fetch_data", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST, help="where to write (default: bench/data)")
    parser.add_argument("--url", default=LOCOMO_URL, help="where to download locomo10.json from (a mirror)")
    parser.add_argument("--sha256", default=LOCOMO_SHA256, help="the sha256 the download must have")
    args = parser.parse_args(argv)
    try:
        written = fetch(args.dest, args.url, args.sha256.lower())
    except FetchFailed as exc:
        print(f"fetch_data: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # the destination cannot be written
        print(f"fetch_data: cannot write under {args.dest}: {exc}", file=sys.stderr)
        return 1
    print(f"locomo10.json: sha256 {written['sha256']} ({written['bytes']} bytes) from {written['source']}")
    for part in ("dev", "test"):
        for name, digest in written[part].items():
            print(f"  {args.dest / 'locomo' / part / (name + '.json')}  sha256 {digest}")
    if written["differ"]:
        print(f"fetch_data: conversations {', '.join(written['differ'])} differ from the copy the published figures "
              "were measured on; figures on them may differ", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Seeded mutations of valid ``memory.*`` and MCP requests, for fuzzing a transport.

``Mutator(seed, note_ids, fuzz_ids).message()`` gives the bytes of one message (no trailing
newline): a valid request changed by one to three mutations, on its structure (wrong types,
absurd dates, long strings, random unicode, extra or missing fields, deep nesting,
batches) and then maybe on its bytes (flips, truncation, invalid UTF-8, NUL, a byte order
mark, huge numbers, duplicate keys). Writes touch project ``fz`` and fuzz-made notes only,
and no mutation turns a read into a write, so notes and globals stored elsewhere must come
through any run unchanged.
"""

from __future__ import annotations

import copy
import json
import random
import uuid
from collections.abc import Callable
from typing import Any

FUZZ_PROJECT = "fz"
READ_ONLY_METHODS = ("memory.get", "memory.search", "memory.list_recent", "memory.get_global", "memory.stats", "ping", "tools/list", "memory.nope")
ABSURD_DATES = (
    "0000-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "0999-12-31T00:00:00Z", "9999-12-31T23:59:59Z",
    "9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59", "2024-02-30T00:00:00Z", "2024-01-01T24:00:00Z",
    "-0001-01-01T00:00:00Z", "+10000-01-01T00:00:00Z", "2024-01-01T00:00:00+25:00", "2024-01-01T00:00:00.9999999999Z",
    "2024-13-01T00:00:00Z", "1970-01-01T00:00:00Z", "2024-01-01", "yesterday", "",
)
JUNK: tuple[Any, ...] = (
    None, True, False, 0, -1, 2**63, -(2**64), 1.5, 1e308, -1e-308, "", " ", "\t\n", "null", [], {}, [None], {"": None},
    "\u0000", "\u202e\u0645\u0631\u062d\u0628\u0627", "\U0001f600" * 3, "e\u0301" * 5, "\ufeff", "\uffff", "global.",
)
UNICODE_POOL = "aZ09 _-.~\u00e9\u00df\u0416\u4e2d\u6587\u0645\u200b\u200d\u202e\u2028\u2029\ufeff\U0001f600\U00010000\x01\x1f\x7f"
BAD_UTF8 = (b"\xc3", b"\xff", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80", b"\xf0\x9f\x98")


class Mutator:
    def __init__(self, seed: int, note_ids: list[str], fuzz_ids: list[str]) -> None:
        self.random = random.Random(seed)
        self.note_ids = note_ids  # stored notes to read (never written by a mutation)
        self.fuzz_ids = fuzz_ids  # notes of project fz, free to update
        self._next_id = 0

    def message(self) -> bytes:
        pick = self.random.random()
        if pick < 0.06:
            members = [self._mutated_request() for _ in range(self.random.choice((1, 2, 5, 40)))]
            raw = json.dumps(members).encode()
        elif pick < 0.07:
            raw = json.dumps([self._seed("ping") for _ in range(self.random.choice((1000, 3000)))]).encode()
        else:
            raw = json.dumps(self._mutated_request(), ensure_ascii=self.random.random() < 0.5).encode()
        if self.random.random() < 0.5:
            raw = self._mutate_bytes(raw)
        return raw

    def _mutated_request(self) -> Any:
        request = self._seed(self.random.choice(SEEDS))
        for _ in range(self.random.randint(0, 3)):
            request = self.random.choice(STRUCTURAL)(self, request)
        return request

    def _seed(self, method: str) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        params = PARAMS[method](self) if method in PARAMS else None
        if params is not None:
            message["params"] = params
        if self.random.random() < 0.05:
            del message["id"]  # a notification
        return message

    def text(self, longest: int = 40) -> str:
        return "".join(self.random.choice(UNICODE_POOL) for _ in range(self.random.randint(1, longest)))

    def junk(self) -> Any:
        return copy.deepcopy(self.random.choice(JUNK))

    def note(self) -> dict[str, Any]:
        return {
            "projectId": FUZZ_PROJECT,
            "groupId": self.random.choice(("g", "feature-1", "global", "task-9")),
            "title": self.random.choice((None, self.text())),
            "text": "fuzz " + self.text(),
            "tags": [self.text(8) for _ in range(self.random.randint(0, 3))],
            "metadata": self.random.choice((None, {"conversationId": self.text(10), "messageRange": "1-2"}, {"n": [1, {"m": None}]})),
            "createdAt": self.random.choice((None, "2024-01-15T10:30:00Z")),
        }

    # structural mutations: each takes a request and gives a changed one

    def wrong_value(self, request: Any) -> Any:
        holder, key = self._somewhere(request)
        if holder is not None:
            holder[key] = self.random.choice((self.junk(), self.random.choice(ABSURD_DATES), self.text(200), "x" * self.random.choice((1000, 70_000))))
        return request

    def absurd_date(self, request: Any) -> Any:
        params = request.get("params") if isinstance(request, dict) else None
        if isinstance(params, dict):
            params[self.random.choice(("createdAt", "since", "until", "updatedAt", "expiresAt"))] = self.random.choice(ABSURD_DATES)
        return request

    def extra_field(self, request: Any) -> Any:
        holder, _ = self._somewhere(request)
        target = holder if isinstance(holder, dict) else request
        if isinstance(target, dict):
            target[self.random.choice(("extra", "id", "jsonrpc", "params", "__proto__", self.text(5)))] = self.junk()
        return request

    def drop_field(self, request: Any) -> Any:
        holder, key = self._somewhere(request)
        if isinstance(holder, dict):
            del holder[key]
        return request

    def deep_value(self, request: Any) -> Any:
        value: Any = "bottom"
        for _ in range(self.random.choice((10, 63, 64, 65, 100, 255, 300, 900))):
            value = self.random.choice(([value], {"k": value}))
        holder, key = self._somewhere(request)
        if holder is not None:
            holder[key] = value
        return request

    def other_method(self, request: Any) -> Any:
        if isinstance(request, dict):
            request["method"] = self.random.choice(READ_ONLY_METHODS + (self.text(10), "x" * 5000))
        return request

    def _somewhere(self, request: Any) -> tuple[Any, Any]:
        """A container inside ``request`` and one of its keys (or indexes)."""
        holder, key = None, None
        node = request
        while isinstance(node, (dict, list)) and node and self.random.random() < 0.8:
            holder = node
            key = self.random.choice(list(node)) if isinstance(node, dict) else self.random.randrange(len(node))
            node = node[key]
        return holder, key

    # byte mutations

    def _mutate_bytes(self, raw: bytes) -> bytes:
        data = bytearray(raw)
        for _ in range(self.random.randint(1, 3)):
            data = bytearray(self.random.choice(BYTE_MUTATIONS)(self, bytes(data)))
        return bytes(data).replace(b"\n", b" ") if self.random.random() < 0.9 else bytes(data)

    def _at(self, raw: bytes) -> int:
        return self.random.randrange(len(raw) + 1)

    def flip(self, raw: bytes) -> bytes:
        if not raw:
            return raw
        at = self.random.randrange(len(raw))
        return raw[:at] + bytes([raw[at] ^ self.random.randint(1, 255)]) + raw[at + 1 :]

    def truncate(self, raw: bytes) -> bytes:
        return raw[: self._at(raw)]

    def insert(self, raw: bytes) -> bytes:
        at = self._at(raw)
        piece = self.random.choice(BAD_UTF8 + (b"\x00", b"1e400", b"-1e999", b"123456789" * 40, b'"\\ud800"', b"\\", b'"', b"[" * 2000, b"}"))
        return raw[:at] + piece + raw[at:]

    def duplicate_key(self, raw: bytes) -> bytes:
        return raw.replace(b"{", b'{"id": "dup", "method": "memory.get", ', 1)

    def bom(self, raw: bytes) -> bytes:
        return b"\xef\xbb\xbf" + raw

    def nest(self, raw: bytes) -> bytes:
        depth = self.random.choice((2, 255, 256, 257, 1000, 20_000))
        return b"[" * depth + raw + b"]" * depth


def _params(method: str) -> Callable[[Mutator], dict[str, Any]]:
    def build(m: Mutator) -> dict[str, Any]:
        if method == "memory.add_note":
            return m.note()
        if method == "memory.add_notes":
            return {"notes": [m.note() for _ in range(m.random.randint(1, 4))]}
        if method == "memory.search":
            return {"projectId": m.random.choice((FUZZ_PROJECT, "kept")), "query": m.text(), "topK": m.random.randint(1, 20), "tags": None, "since": "2020-01-01T00:00:00Z"}
        if method == "memory.get":
            return {"id": m.random.choice(m.note_ids)}
        if method == "memory.update":
            return {"id": m.random.choice(m.fuzz_ids), "patch": {"title": m.text(), "tags": [m.text(5)]}}
        if method == "memory.list_recent":
            return {"projectId": m.random.choice((FUZZ_PROJECT, "kept")), "limit": m.random.randint(1, 50)}
        if method == "memory.upsert_global":
            return {"projectId": FUZZ_PROJECT, "key": "global.fuzz." + m.text(5), "value": m.junk()}
        if method == "memory.get_global":
            return {"projectId": "kept", "key": "global.project.conventions"}
        if method == "memory.delete":
            return {"id": str(uuid.UUID(int=m.random.getrandbits(128), version=4))}
        if method == "memory.stats":
            return {"projectId": FUZZ_PROJECT}
        if method == "initialize":
            return {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}
        if method == "tools/call":
            name, arguments = m.random.choice(
                (("memory_search", {"projectId": FUZZ_PROJECT, "query": m.text()}), ("memory_add_note", m.note()), ("memory_get", {"id": m.random.choice(m.note_ids)}))
            )
            return {"name": name, "arguments": arguments}
        return {}

    return build


SEEDS = (
    "memory.add_note", "memory.add_notes", "memory.search", "memory.get", "memory.update", "memory.list_recent",
    "memory.get_config", "memory.upsert_global", "memory.get_global", "memory.delete", "memory.stats",
    "initialize", "notifications/initialized", "ping", "tools/list", "tools/call",
)
PARAMS = {method: _params(method) for method in SEEDS if method not in ("memory.get_config", "notifications/initialized", "ping", "tools/list")}
STRUCTURAL = (Mutator.wrong_value, Mutator.absurd_date, Mutator.extra_field, Mutator.drop_field, Mutator.deep_value, Mutator.other_method)
BYTE_MUTATIONS = (Mutator.flip, Mutator.truncate, Mutator.insert, Mutator.duplicate_key, Mutator.bom, Mutator.nest)

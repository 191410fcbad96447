"""The stdio loop answers every non-blank line with one line, whatever the bytes."""

from __future__ import annotations

import io
import json

from local_mcp_memory.entrypoints.rpc.dispatcher import Dispatcher
from local_mcp_memory.entrypoints.rpc.stdio import MAX_LINE, StdioServer


def serve(stdin: bytes) -> list[dict]:
    stdout = io.BytesIO()
    StdioServer(Dispatcher({"echo": lambda params: params}), io.BytesIO(stdin), stdout).serve(install_signals=False)
    return [json.loads(line) for line in stdout.getvalue().splitlines()]


def echo(request_id: int) -> bytes:
    return b'{"jsonrpc": "2.0", "id": %d, "method": "echo", "params": [%d]}\n' % (request_id, request_id)


def test_each_bad_line_gets_one_error_line_and_the_next_line_is_served() -> None:
    lines = [b"\xff\xfe\n", b"[" * 100_000 + b"\n", b'{"a": 1e400}\n', b"\x00\n", b"\xef\xbb\xbf{}\n", b"   \n", b'{"jsonrpc": "2.0", "id": 1\n']
    replies = serve(b"".join(line + echo(n) for n, line in enumerate(lines)))
    codes = [r["error"]["code"] for r in replies if "error" in r]
    assert codes == [-32700, -32600, -32700, -32700, -32700, -32700]  # the blank line gets nothing
    assert [r["result"] for r in replies if "result" in r] == [[n] for n in range(len(lines))]


def test_a_line_over_the_limit_is_refused_and_skipped_whole() -> None:
    replies = serve(b'{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": ["' + b"x" * MAX_LINE + b'"]}\n' + echo(2))
    assert replies[0]["error"]["code"] == -32600 and replies[0]["id"] is None
    assert replies[1] == {"jsonrpc": "2.0", "id": 2, "result": [2]}
    assert len(replies) == 2

"""uvicorn's h11 protocol with a deadline on a request's headers, answering in JSON.

uvicorn times a kept-alive connection that sends nothing, and ``HttpApp`` times the body, but
nothing timed headers that never end: 256 connections each sending ``POST /rpc HTTP/1.1`` and
a ``Host`` line, then nothing, held every one of uvicorn's ``limit_concurrency`` places, and
every other client got 503 for as long as they stayed open. A connection whose request line
and headers are not complete within ``HEADERS_SECONDS`` of its first byte (or of its opening)
is answered 408, as JSON, and closed. Bytes that are no HTTP request are answered 400 as
JSON too, in the shape of the app's other refusals, where uvicorn wrote a plain-text line,
and so is a request beyond ``limit_concurrency``: the protocol counts the places itself, at
the instant and by the rule uvicorn would (the connections open, this one included, or the
requests in flight), and hands that request to an app that answers 503 in JSON.
"""

from __future__ import annotations

import asyncio
import json

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from local_mcp_memory.entrypoints.http.app import Receive, Scope, Send

HEADERS_SECONDS = 10.0
"""How long a request's line and headers may take to arrive."""


def _closing_answer(status: int, phrase: str, reason: str, message: str) -> bytes:
    """A whole response that ends the connection, written before (or instead of) h11's state."""
    body = json.dumps({"error": {"status": status, "reason": reason, "message": message}}).encode()
    head = f"HTTP/1.1 {status} {phrase}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n"
    return head.encode("ascii") + body


def _late_answer() -> bytes:
    message = f"the request's headers did not arrive within {HEADERS_SECONDS:g} s"
    return _closing_answer(408, "Request Timeout", "headers_timeout", message)


_BUSY_MESSAGE = "the server has as many connections or requests as it serves at once; retry in a moment"


async def _busy(scope: Scope, receive: Receive, send: Send) -> None:
    """The answer to a request beyond the places: 503 in JSON, and the connection closed."""
    body = json.dumps({"error": {"status": 503, "reason": "too_many_connections", "message": _BUSY_MESSAGE}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), (b"retry-after", b"1"), (b"connection", b"close")]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class TimedHeadersProtocol(H11Protocol):
    """``H11Protocol`` whose connections must finish each request's headers in time."""

    _headers_due: asyncio.TimerHandle | None = None

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._places = self.limit_concurrency
        self.limit_concurrency = None  # counted by ``app`` below, which uvicorn reads as it dispatches a request

    @property
    def app(self):  # type: ignore[no-untyped-def]
        """The app a request just read is given: ``_busy`` when every place is taken."""
        places = self._places
        if places is not None and (len(self.connections) >= places or len(self.tasks) >= places):
            self.logger.warning("Exceeded concurrency limit.")
            return _busy
        return self._app

    @app.setter
    def app(self, app: object) -> None:
        self._app = app

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:
            if self._headers_due is None:  # the first bytes of a kept-alive connection's next request
                self._arm()
        else:
            self._disarm()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to bytes h11 cannot read as a request (``msg``: its one line), as JSON."""
        message = "Bad Request: the bytes received are not an HTTP/1.1 request (request line, headers, then a body of the length said)"
        self.transport.write(_closing_answer(400, "Bad Request", "bad_http_request", message))
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._headers_due = self.loop.call_later(HEADERS_SECONDS, self._late)

    def _disarm(self) -> None:
        if self._headers_due is not None:
            self._headers_due.cancel()
            self._headers_due = None

    def _late(self) -> None:
        self._headers_due = None
        waiting = self.cycle is None or self.cycle.response_complete  # no request of this connection is being answered
        if self.conn.their_state is h11.IDLE and waiting and not self.transport.is_closing():
            self.transport.write(_late_answer())
            self.transport.close()

"""The dashboard's static files: ``GET /`` (the page) and ``GET /assets/<name>``.

The files live in ``entrypoints/http/dashboard/`` and ship as package data; they are read
once, when the app is built, so a request never touches the disk and no path from a URL
ever reaches the file system (a name is looked up in a table of the files found). Unknown
names are 404. Only flat file names with a known suffix are served, each with its content
type.

The files hold no data: they load without the token, and every call the page then makes
to ``/rpc`` needs it. Every answer here carries a strict policy (``SECURITY_HEADERS``): a
Content-Security-Policy that allows scripts, styles, images and connections from this
origin only and no inline script or style, no framing, no referrer, no content sniffing.
Like every answer of the server they are ``Cache-Control: no-store``: the files are small,
come from the loopback, and a new version of the package is never mixed with a cached
page of the old one.
"""

from __future__ import annotations

from pathlib import Path

from local_mcp_memory.entrypoints.http import responses
from local_mcp_memory.entrypoints.http.responses import Response

ASSET_DIR = Path(__file__).with_name("dashboard")
PAGE = "index.html"
ASSET_PREFIX = "/assets/"
CONTENT_TYPES = {
    ".html": b"text/html; charset=utf-8",
    ".css": b"text/css; charset=utf-8",
    ".js": b"text/javascript; charset=utf-8",
    ".svg": b"image/svg+xml",
}
CONTENT_SECURITY_POLICY = (
    b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    b"connect-src 'self'; font-src 'none'; object-src 'none'; base-uri 'none'; "
    b"form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


def is_static(path: str) -> bool:
    return path == "/" or path.startswith(ASSET_PREFIX)


class StaticFiles:
    """The page and its assets, read from ``directory`` at construction."""

    def __init__(self, directory: Path = ASSET_DIR) -> None:
        self._files: dict[str, Response] = {}
        for file in sorted(directory.iterdir()):
            content_type = CONTENT_TYPES.get(file.suffix)
            if file.is_file() and content_type is not None:
                self._files[file.name] = Response(200, file.read_bytes(), SECURITY_HEADERS, content_type)

    def names(self) -> list[str]:
        return sorted(self._files)

    def answer(self, path: str) -> Response:
        """The file for ``path`` (``/`` or ``/assets/<name>``); 404 for any other."""
        name = PAGE if path == "/" else path.removeprefix(ASSET_PREFIX)
        found = self._files.get(name) if path == "/" or name != PAGE else None
        if found is not None:
            return found
        message = f"Not Found: the dashboard has no file {path[:100]}"
        return responses.refusal(path, 404, "not_found", message, *SECURITY_HEADERS)

"""The dashboard's files over HTTP, against a real server: what is served, with which headers,
and what the guard refuses on ``/`` exactly as on ``/rpc``. The page itself is tested in a
browser (``test_dashboard_browser.py``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.http_server import HttpServer, rpc

REPO = Path(__file__).resolve().parents[3]
ASSETS = REPO / "entrypoints" / "http" / "dashboard"
TOKEN = "dashboard-http-token-0123"
CONTENT_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    with HttpServer(tmp_path_factory.mktemp("open")) as server:
        yield server


@pytest.fixture(scope="module")
def guarded_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    with HttpServer(tmp_path_factory.mktemp("guarded"), env={"MCP_MEMORY_HTTP_TOKEN": TOKEN}, token=TOKEN) as server:
        yield server


def references(page: str) -> list[str]:
    """Every URL the page and its modules name: src, href and import specifiers."""
    found = re.findall(r'(?:src|href)="([^"#][^"]*)"', page)
    for module in ASSETS.glob("*.js"):
        found += ["/assets/" + name.removeprefix("./") for name in re.findall(r'from "(\./[^"]+)"', module.read_text())]
    return sorted(set(found))


def assert_strict_headers(response: httpx.Response) -> None:
    policy = response.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy and "unsafe-inline" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["referrer-policy"] == "no-referrer"


def test_the_page_is_served_at_the_root_as_html_with_a_strict_policy(open_server: HttpServer) -> None:
    with httpx.Client(base_url=open_server.base_url) as client:
        response = client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.text.startswith("<!doctype html>") and '<input type="password"' in response.text
    assert_strict_headers(response)
    assert not any(name.startswith("access-control-") for name in response.headers)


def test_every_file_the_page_names_is_served_from_here_with_its_content_type(open_server: HttpServer) -> None:
    with httpx.Client(base_url=open_server.base_url) as client:
        page = client.get("/").text
        urls = references(page)
        assert {"/assets/main.js", "/assets/app.css", "/assets/rpc.js"} <= set(urls)
        for url in urls:
            assert url.startswith("/assets/"), f"{url} does not come from this server"
            response = client.get(url)
            assert response.status_code == 200, url
            assert response.headers["content-type"] == CONTENT_TYPES[Path(url).suffix], url
            assert response.content == (ASSETS / Path(url).name).read_bytes()
            assert_strict_headers(response)


def test_no_file_holds_inline_script_or_style_or_a_reference_outside_the_server() -> None:
    page = (ASSETS / "index.html").read_text()
    tags = re.findall(r"<[^>]+>", page)
    assert "<style" not in page and not [tag for tag in tags if re.search(r"\s(style|on[a-z]+)\s*=", tag)]
    assert all(re.fullmatch(r"<script[^>]*\bsrc=\"/assets/[a-z]+\.js\"[^>]*>", tag) for tag in re.findall(r"<script[^>]*>", page))
    for file in ASSETS.iterdir():
        text = file.read_text()
        assert not re.search(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", text.replace("http://www.w3.org/2000/svg", "")), file.name
        assert not re.search(r"\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write|createContextualFragment|DOMParser", text), file.name


def test_an_unknown_file_is_404_and_the_page_is_served_only_at_the_root(open_server: HttpServer) -> None:
    with httpx.Client(base_url=open_server.base_url) as client:
        for url in ("/assets/nope.js", "/assets/index.html", "/assets/", "/assets/../guard.py", "/assets/%2e%2e/guard.py", "/index.html"):
            response = client.get(url)
            assert response.status_code == 404, url
            assert response.json()["error"]["reason"] == "not_found"


def test_the_files_accept_get_only(open_server: HttpServer) -> None:
    with httpx.Client(base_url=open_server.base_url) as client:
        response = client.post("/", json=rpc("ping"))
    assert response.status_code == 405 and response.headers["allow"] == "GET, OPTIONS"


def test_a_foreign_host_is_refused_on_the_page_as_on_rpc(open_server: HttpServer) -> None:
    with httpx.Client(base_url=open_server.base_url) as client:
        for url in ("/", "/assets/main.js"):
            response = client.get(url, headers={"host": f"rebound.example:{open_server.port}"})
            assert response.status_code == 403, url
            assert response.json()["error"]["reason"] == "host_not_allowed"


def test_the_pages_own_origin_may_call_rpc_and_other_origins_may_not(open_server: HttpServer) -> None:
    port = open_server.port
    with httpx.Client(base_url=open_server.base_url) as client:
        for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
            response = client.post("/rpc", json=rpc("memory.stats", {}), headers={"origin": origin})
            assert response.status_code == 200 and "result" in response.json(), origin
            assert "access-control-allow-origin" not in response.headers  # same origin: no CORS needed
        for origin in (f"http://127.0.0.1:{port + 1}", f"https://localhost:{port}", "https://evil.example"):
            response = client.post("/rpc", json=rpc("memory.stats", {}), headers={"origin": origin})
            assert response.status_code == 403, origin


def test_with_a_token_the_files_load_without_it_and_every_data_call_needs_it(guarded_server: HttpServer) -> None:
    own = {"origin": guarded_server.base_url}
    with httpx.Client(base_url=guarded_server.base_url) as client:
        assert client.get("/").status_code == 200 and client.get("/assets/main.js").status_code == 200
        assert client.post("/rpc", json=rpc("memory.stats", {}), headers=own).status_code == 401
        authorized = client.post("/rpc", json=rpc("memory.stats", {}), headers={**own, "authorization": f"Bearer {TOKEN}"})
    assert authorized.status_code == 200 and "result" in authorized.json()

"""What the HTTP transport refuses and what it lets through, against a real server."""

from __future__ import annotations

import gzip

from collections.abc import Iterator

import httpx
import pytest

from tests.integration.http_server import HttpServer, rpc

ORIGIN = "http://localhost:5173"
CONFIG_TOKEN = "token-from-the-config-file"
ENV_TOKEN = "token-from-the-environment"
MAX_BODY = 64 * 1024


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """Defaults: no token, no allowed origin; a small body limit."""
    with HttpServer(tmp_path_factory.mktemp("open"), env={"MCP_MEMORY_HTTP_MAX_BODY": str(MAX_BODY)}) as server:
        yield server


@pytest.fixture(scope="module")
def guarded_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """A token in the config file and another in the environment; one allowed origin."""
    config = {"http": {"allowedOrigins": [ORIGIN], "token": CONFIG_TOKEN}}
    home = tmp_path_factory.mktemp("guarded")
    with HttpServer(home, config=config, env={"MCP_MEMORY_HTTP_TOKEN": ENV_TOKEN}, token=ENV_TOKEN) as server:
        yield server


def get_config() -> dict:
    return rpc("memory.get_config")


def error_reason(response: httpx.Response) -> str:
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None and body["error"]["code"] == -32600
    return body["error"]["data"]["reason"]


def test_a_request_naming_the_loopback_address_is_served(open_server: HttpServer) -> None:
    with open_server.client() as client:
        for host in (f"127.0.0.1:{open_server.port}", f"localhost:{open_server.port}", f"LOCALHOST:{open_server.port}"):
            response = client.post("/rpc", json=get_config(), headers={"host": host})
            assert response.status_code == 200, host
            assert response.json()["result"]["transportDefaults"]["defaultTransport"]


def test_a_foreign_host_header_is_refused_against_dns_rebinding(open_server: HttpServer) -> None:
    with open_server.client() as client:
        for host in (f"attacker.example:{open_server.port}", "127.0.0.1", f"127.0.0.1:{open_server.port + 1}"):
            response = client.post("/rpc", json=get_config(), headers={"host": host})
            assert response.status_code == 403, host
            assert error_reason(response) == "host_not_allowed"


def test_a_request_from_a_web_page_is_refused_when_no_origin_is_configured(open_server: HttpServer) -> None:
    with open_server.client() as client:
        response = client.post("/rpc", json=get_config(), headers={"origin": "https://evil.example"})
    assert response.status_code == 403
    assert error_reason(response) == "origin_not_allowed"
    assert not any(name.startswith("access-control-") for name in response.headers)


def test_no_cors_headers_are_sent_by_default(open_server: HttpServer) -> None:
    with open_server.client() as client:
        response = client.post("/rpc", json=get_config())
        preflight = client.options("/rpc", headers={"origin": ORIGIN, "access-control-request-method": "POST"})
    assert response.status_code == 200
    assert not any(name.startswith("access-control-") for name in response.headers)
    assert preflight.status_code == 403
    assert not any(name.startswith("access-control-") for name in preflight.headers)


def test_a_body_over_the_limit_is_refused_with_413(open_server: HttpServer) -> None:
    big = rpc("memory.add_note", {"projectId": "p", "groupId": "g", "text": "x" * MAX_BODY})
    with open_server.client() as client:
        response = client.post("/rpc", json=big)
    assert response.status_code == 413
    assert error_reason(response) == "body_too_large"


def test_a_chunked_body_over_the_limit_is_refused_with_413(open_server: HttpServer) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"jsonrpc":"2.0","id":1,"method":"memory.get","params":{"id":"'
        for _ in range(MAX_BODY // 1024 + 1):
            yield b"a" * 1024
        yield b'"}}'

    with open_server.client() as client:
        response = client.post("/rpc", content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 413


def test_a_body_that_is_not_json_by_content_type_is_refused_with_415(open_server: HttpServer) -> None:
    body = httpx.Request("POST", "/", json=get_config()).content
    with open_server.client() as client:
        for content_type in ("text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin-1"):
            response = client.post("/rpc", content=body, headers={"content-type": content_type})
            assert response.status_code == 415, content_type
            assert error_reason(response) == "unsupported_media_type"
        missing = client.post("/rpc", content=body)
        assert missing.status_code == 415


def test_an_encoded_body_is_refused_with_415_naming_the_encoding(open_server: HttpServer) -> None:
    body = gzip.compress(httpx.Request("POST", "/", json=get_config()).content)
    with open_server.client() as client:
        refused = client.post("/rpc", content=body, headers={"content-type": "application/json", "content-encoding": "gzip"})
        plain = client.post("/rpc", json=get_config(), headers={"content-encoding": "identity"})
    assert refused.status_code == 415 and error_reason(refused) == "unsupported_media_type"
    assert "Content-Encoding gzip" in refused.json()["error"]["message"]
    assert plain.status_code == 200 and "result" in plain.json()


def test_an_empty_body_is_a_parse_error_saying_so(open_server: HttpServer) -> None:
    with open_server.client() as client:
        response = client.post("/rpc", content=b"", headers={"content-type": "application/json"})
    assert response.status_code == 200
    assert response.json()["error"] == {"code": -32700, "message": "Parse error: the message is not valid JSON (it is empty)"}


def test_a_json_content_type_with_a_utf8_charset_is_accepted(open_server: HttpServer) -> None:
    body = httpx.Request("POST", "/", json=get_config()).content
    with open_server.client() as client:
        response = client.post("/rpc", content=body, headers={"content-type": "application/json; charset=UTF-8"})
    assert response.status_code == 200


def test_get_on_rpc_is_refused_with_405_and_allow(open_server: HttpServer) -> None:
    with open_server.client() as client:
        response = client.get("/rpc")
        put = client.put("/rpc", json=get_config())
    assert response.status_code == 405 and put.status_code == 405
    assert response.headers["allow"] == "POST, OPTIONS"
    assert error_reason(response) == "method_not_allowed"


def test_an_unknown_path_is_404(open_server: HttpServer) -> None:
    with open_server.client() as client:
        response = client.post("/jsonrpc", json=get_config())
    assert response.status_code == 404
    assert response.json()["error"]["reason"] == "not_found"


def test_a_request_without_the_token_is_refused_with_401(guarded_server: HttpServer) -> None:
    with httpx.Client(base_url=guarded_server.base_url) as client:
        response = client.post("/rpc", json=get_config())
        health = client.get("/health")
    assert response.status_code == 401 and health.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert error_reason(response) == "token_missing"


def test_a_wrong_token_is_refused_with_401(guarded_server: HttpServer) -> None:
    with httpx.Client(base_url=guarded_server.base_url) as client:
        for authorization in ("Bearer wrong", f"Basic {ENV_TOKEN}", f"Bearer {ENV_TOKEN}x"):
            response = client.post("/rpc", json=get_config(), headers={"authorization": authorization})
            assert response.status_code == 401, authorization
            assert error_reason(response) == "token_invalid"


def test_the_environment_token_wins_over_the_config_file_token(guarded_server: HttpServer) -> None:
    with httpx.Client(base_url=guarded_server.base_url) as client:
        env = client.post("/rpc", json=get_config(), headers={"authorization": f"Bearer {ENV_TOKEN}"})
        config = client.post("/rpc", json=get_config(), headers={"authorization": f"Bearer {CONFIG_TOKEN}"})
    assert env.status_code == 200
    assert config.status_code == 401


def test_the_token_never_appears_in_answers_or_logs(guarded_server: HttpServer) -> None:
    with guarded_server.client() as client:
        answer = client.post("/rpc", json=get_config()).text
        client.post("/rpc", json=get_config(), headers={"authorization": "Bearer wrong"})
    assert ENV_TOKEN not in answer and CONFIG_TOKEN not in answer
    assert ENV_TOKEN not in guarded_server.log() and CONFIG_TOKEN not in guarded_server.log()


def test_a_configured_origin_gets_a_preflight_answer(guarded_server: HttpServer) -> None:
    headers = {
        "origin": ORIGIN,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, authorization",
    }
    with httpx.Client(base_url=guarded_server.base_url) as client:  # a preflight carries no token
        response = client.options("/rpc", headers=headers)
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == ORIGIN
    assert "POST" in response.headers["access-control-allow-methods"]
    allowed = {h.strip() for h in response.headers["access-control-allow-headers"].split(",")}
    assert {"content-type", "authorization", "mcp-session-id", "mcp-protocol-version"} <= allowed
    assert response.headers["vary"] == "Origin"


def test_a_configured_origin_with_the_token_is_served_with_cors_headers(guarded_server: HttpServer) -> None:
    with guarded_server.client() as client:
        response = client.post("/rpc", json=get_config(), headers={"origin": ORIGIN})
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == ORIGIN
    assert response.headers["vary"] == "Origin"


def test_another_origin_is_refused_even_with_the_token(guarded_server: HttpServer) -> None:
    with guarded_server.client() as client:
        response = client.post("/rpc", json=get_config(), headers={"origin": "http://localhost:9999"})
        preflight = client.options("/rpc", headers={"origin": "http://localhost:9999", "access-control-request-method": "POST"})
    assert response.status_code == 403 and preflight.status_code == 403
    assert "access-control-allow-origin" not in response.headers

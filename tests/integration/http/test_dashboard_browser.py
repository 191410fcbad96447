"""The dashboard in a real headless Chromium against a real ``mcp-memory serve --transport http``.

The embedder is a fake Ollama on 127.0.0.1 computing hashing vectors, so no model loads and
notes sharing words are near each other. What the page shows is checked against what the
server answers to plain JSON-RPC calls.

Set ``MCP_MEMORY_DASHBOARD_SHOTS`` to a directory (``docs``) to keep the screenshots there.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement

from tests.fakes.embedding_servers import FakeOllamaServer
from tests.integration.http.browser import console, resource_urls, set_color_scheme, start_browser, wait_for
from tests.integration.http_server import HttpServer, rpc

MODEL, OTHER_MODEL = "nomic-embed-text", "mxbai-embed-large"
TOKEN = "dashboard-token-0123456789"
BIG_NOTES = 1_000
REEMBED_NOTES = 250
SECOND = 1_000.0  # ms

DEMO_NOTES = [
    {"groupId": "feature-auth", "title": "Token refresh", "text": "Refresh tokens rotate on every use; the old token is revoked at once.", "tags": ["decision", "auth"]},
    {"groupId": "feature-auth", "text": "Sessions expire after 30 minutes without activity; the refresh token lives 14 days.", "tags": ["auth"]},
    {"groupId": "task-142", "title": "Flaky upload test", "text": "The upload test failed one run in ten: it raced the thumbnail worker. Fixed by waiting for the worker's done event.", "tags": ["bug"]},
    {"groupId": "global", "title": "Conventions", "text": "Small pull requests; every change comes with a test; no merge on a red build.", "tags": ["convention"]},
    {"groupId": "feature-search", "title": "Search blends two scores", "text": "Hybrid search blends keyword (BM25) and meaning scores, 0.3 and 0.7.", "tags": ["decision"]},
]
XSS_NOTES = [
    {"groupId": "g", "title": "script note", "text": '<script>document.title="pwned";alert("script")</script> plain after'},
    {"groupId": "g", "title": "image note", "text": "<img src=x onerror=\"document.title='pwned';alert('img')\"> and more"},
    {"groupId": "g", "title": "<b onmouseover=alert(3)>bold title</b>", "text": '"><svg onload=alert(4)><iframe src="javascript:alert(5)"></iframe>'},
]
SERVER_MARKUP = "img, script, svg, iframe, b, object, embed"
TOPICS = ["billing", "search", "upload", "login", "export", "cache", "deploy", "metrics", "backup", "email"]
ACTIONS = ["retries", "validates", "compresses", "logs", "batches", "encrypts", "streams", "caches"]
OBJECTS = ["invoices", "queries", "thumbnails", "sessions", "reports", "tokens", "releases", "events"]


def big_note(n: int) -> dict[str, Any]:
    topic, action, obj = TOPICS[n % 10], ACTIONS[n % 8], OBJECTS[(n // 3) % 8]
    return {
        "projectId": "big",
        "groupId": f"area-{n % 5}",
        "text": f"Note {n}: the {topic} service {action} {obj} before handing them on (case {n * 7919 % 10007}).",
        "tags": [topic, f"sprint-{n % 12}"],
    }


class Client:
    def __init__(self, server: HttpServer) -> None:
        self.server = server
        self.http = server.client()

    def call(self, method: str, params: Any = None) -> dict[str, Any]:
        return self.http.post("/rpc", json=rpc(method, params)).json()

    def result(self, method: str, params: Any = None) -> Any:
        reply = self.call(method, params)
        assert "result" in reply, reply
        return reply["result"]


@pytest.fixture(scope="module")
def ollama() -> Iterator[FakeOllamaServer]:
    with FakeOllamaServer(dim=16, models=(MODEL, OTHER_MODEL)) as fake:
        yield fake


def embedder_config(ollama: FakeOllamaServer) -> dict[str, Any]:
    return {"embedder": {"provider": "ollama", "baseUrl": ollama.url, "model": MODEL}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, ollama: FakeOllamaServer) -> Iterator[Client]:
    with HttpServer(tmp_path_factory.mktemp("dashboard"), config=embedder_config(ollama)) as running:
        client = Client(running)
        client.result("memory.add_notes", {"notes": [{"projectId": "demo-app", **note} for note in DEMO_NOTES]})
        client.result("memory.add_notes", {"notes": [{"projectId": "xss", **note} for note in XSS_NOTES]})
        client.result("memory.add_notes", {"notes": [big_note(n) for n in range(BIG_NOTES)]})
        client.result("memory.upsert_global", {"projectId": "demo-app", "key": "global.project.conventions", "value": "Small PRs; every change has a test."})
        client.result("memory.upsert_global", {"projectId": "demo-app", "key": "global.memory.groupDefaults", "value": {"featurePrefix": "feature-", "taskPrefix": "task-"}})
        yield client
        client.http.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    driver = start_browser()
    yield driver
    driver.quit()


@pytest.fixture(autouse=True)
def fresh_tab(browser: WebDriver) -> None:
    """Each test starts on a blank page, in light mode, at laptop size, with an empty console."""
    browser.get("about:blank")
    browser.set_window_size(1280, 860)
    set_color_scheme(browser, "light")
    console(browser)


def load(browser: WebDriver, server: Client, route: str = "") -> None:
    """A full page load of ``route`` (``#/project/demo-app``), waiting for the first data on screen."""
    browser.get("about:blank")
    browser.get(f"{server.server.base_url}/{route}")
    wait_for(lambda: browser.execute_script("return performance.getEntriesByName('mcp-memory:ready').length > 0"), what="the first data on screen")


def project_route(project: str) -> str:
    return "#/project/" + project


def by_id(browser: WebDriver, element_id: str) -> WebElement:
    return browser.find_element(By.ID, element_id)


def errors_in(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entry for entry in entries if entry["level"] in ("SEVERE", "WARNING")]


def assert_no_alert(browser: WebDriver) -> None:
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018  (reading it is what raises)


def search(browser: WebDriver, query: str, mode: str = "hybrid") -> list[WebElement]:
    box = by_id(browser, "search-input")
    box.clear()
    browser.execute_script("arguments[0].value = arguments[1]", by_id(browser, "search-mode"), mode)
    browser.execute_script("document.getElementById('search-results').replaceChildren()")  # no earlier results to mistake
    box.send_keys(query + Keys.ENTER)
    wait_for(lambda: f"({mode}," in by_id(browser, "search-summary").text, what=f"{mode} results")
    return browser.find_elements(By.CSS_SELECTOR, "#search-results li.note")


def test_the_page_loads_without_console_errors_and_requests_nothing_beyond_127_0_0_1(browser: WebDriver, server: Client) -> None:
    load(browser, server, project_route("demo-app"))
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#recent-list li.note"), what="recent notes")
    urls = resource_urls(browser)
    assert any(url.endswith("/assets/main.js") for url in urls) and any(url.endswith("/rpc") for url in urls)
    assert all(url.startswith(server.server.base_url + "/") for url in urls), urls
    assert errors_in(console(browser)) == []


def test_the_projects_are_listed_with_their_note_counts(browser: WebDriver, server: Client) -> None:
    load(browser, server)
    stats = server.result("memory.stats", {})
    rows = browser.find_elements(By.CSS_SELECTOR, "#projects tbody tr")
    shown = {row.find_elements(By.TAG_NAME, "td")[0].text: int(row.find_elements(By.TAG_NAME, "td")[1].text) for row in rows}
    assert shown == stats["byProject"]
    assert {project: shown[project] for project in ("demo-app", "xss", "big")} == {"demo-app": 5, "xss": 3, "big": BIG_NOTES}
    sidebar = {link.get_attribute("data-project"): int(link.find_element(By.CLASS_NAME, "count").text) for link in browser.find_elements(By.CSS_SELECTOR, "#project-list a")}
    assert sidebar == shown


def test_a_project_shows_its_groups_tags_recent_notes_and_globals(browser: WebDriver, server: Client) -> None:
    load(browser, server)
    browser.find_element(By.CSS_SELECTOR, '#project-list a[data-project="demo-app"]').click()
    wait_for(lambda: by_id(browser, "project-title").text == "demo-app", what="the project view")
    groups = [chip.text for chip in browser.find_elements(By.CSS_SELECTOR, "#groups .chip")]
    assert groups[0] == "all groups" and sorted(groups[1:]) == ["feature-auth (2)", "feature-search (1)", "global (1)", "task-142 (1)"]
    tags = {chip.get_attribute("data-tag") for chip in browser.find_elements(By.CSS_SELECTOR, "#tags .chip")}
    assert tags == {"decision", "auth", "bug", "convention"}
    recent = server.result("memory.list_recent", {"projectId": "demo-app"})["items"]
    shown = [item.get_attribute("data-id") for item in browser.find_elements(By.CSS_SELECTOR, "#recent-list li.note")]
    assert shown == [note["id"] for note in recent]
    globals_text = by_id(browser, "globals").text
    assert "Small PRs; every change has a test." in globals_text and '"featurePrefix": "feature-"' in globals_text

    browser.find_element(By.CSS_SELECTOR, '#groups .chip[data-group="feature-auth"]').click()
    wait_for(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#recent-list li.note")) == 2, what="the group filter")
    assert {group.text for group in browser.find_elements(By.CSS_SELECTOR, "#recent-list .group")} == {"feature-auth"}


def test_recent_notes_are_paged_in_the_servers_order(browser: WebDriver, server: Client) -> None:
    load(browser, server, project_route("big"))
    newest = [note["id"] for note in server.result("memory.list_recent", {"projectId": "big", "limit": 200})["items"]]
    page = lambda: [item.get_attribute("data-id") for item in browser.find_elements(By.CSS_SELECTOR, "#recent-list li.note")]  # noqa: E731
    assert page() == newest[:20]
    assert by_id(browser, "page-newer").get_attribute("disabled") is not None
    by_id(browser, "page-older").click()
    wait_for(lambda: page() == newest[20:40], what="page 2")
    assert "Notes 21–40 of 200 newest" in by_id(browser, "page-position").text
    by_id(browser, "page-newer").click()
    wait_for(lambda: page() == newest[:20], what="page 1 again")


def test_a_search_shows_the_servers_results_with_scores_and_the_query_terms_marked(browser: WebDriver, server: Client) -> None:
    load(browser, server, project_route("demo-app"))
    query = "refresh token rotation"
    hits = search(browser, query, "hybrid")
    expected = server.result("memory.search", {"projectId": "demo-app", "query": query, "mode": "hybrid", "topK": 10})["results"]
    assert [hit.get_attribute("data-id") for hit in hits] == [result["id"] for result in expected]
    scores = [float(hit.find_element(By.CLASS_NAME, "score-value").text) for hit in hits]
    assert scores == [round(result["score"], 3) for result in expected] and scores == sorted(scores, reverse=True)
    # which note leads is the ranking's business (the fake embedder is a bag of words); the marks are the dashboard's
    (titled,) = [hit for hit in hits if hit.find_element(By.CLASS_NAME, "note-open").text == "Token refresh"]
    marked = {mark.text.lower() for mark in titled.find_elements(By.TAG_NAME, "mark")}
    assert marked == {"refresh", "token", "tokens"}  # "tokens" is stemmed like the keyword index does

    keyword_hits = search(browser, "thumbnail worker", "keyword")
    assert len(keyword_hits) == 1 and keyword_hits[0].find_element(By.CLASS_NAME, "note-open").text == "Flaky upload test"
    assert [mark.text for mark in keyword_hits[0].find_elements(By.TAG_NAME, "mark")] == ["thumbnail", "worker", "worker"]  # worker's
    assert errors_in(console(browser)) == []


def test_editing_a_note_in_the_page_changes_it_on_the_server(browser: WebDriver, server: Client) -> None:
    note_id = server.result("memory.add_note", {"projectId": "tend", "groupId": "draft", "title": "Old title", "text": "Old text.", "tags": ["old"]})["id"]
    load(browser, server, project_route("tend"))
    browser.find_element(By.CSS_SELECTOR, f'#recent-list button[data-id="{note_id}"]').click()
    wait_for(lambda: by_id(browser, "note-dialog").get_attribute("open") is not None, what="the note view")
    assert by_id(browser, "note-text").get_attribute("value") == "Old text."
    for field, value in (("note-title", "New title"), ("note-text", "New text, edited in the dashboard."), ("note-tags", "alpha, beta"), ("note-group", "task-9")):
        by_id(browser, field).clear()
        by_id(browser, field).send_keys(value)
    by_id(browser, "note-save").click()
    wait_for(lambda: by_id(browser, "note-dialog").get_attribute("open") is None, what="the note view to close")
    stored = server.result("memory.get", {"id": note_id})
    assert (stored["title"], stored["text"], stored["tags"], stored["groupId"]) == ("New title", "New text, edited in the dashboard.", ["alpha", "beta"], "task-9")
    wait_for(lambda: browser.find_element(By.CSS_SELECTOR, f'#recent-list button[data-id="{note_id}"]').text == "New title", what="the list to show the new title")


def test_a_refused_edit_is_shown_and_changes_nothing(browser: WebDriver, server: Client) -> None:
    note_id = server.result("memory.add_note", {"projectId": "tend", "groupId": "draft", "text": "Stays as it is."})["id"]
    load(browser, server, project_route("tend"))
    browser.find_element(By.CSS_SELECTOR, f'#recent-list button[data-id="{note_id}"]').click()
    wait_for(lambda: by_id(browser, "note-dialog").get_attribute("open") is not None, what="the note view")
    by_id(browser, "note-group").clear()
    by_id(browser, "note-group").send_keys("not a group")
    by_id(browser, "note-save").click()
    error = wait_for(lambda: by_id(browser, "note-error").text, what="the refusal")
    assert "patch.groupId" in error
    assert server.result("memory.get", {"id": note_id})["groupId"] == "draft"


def test_deleting_a_note_asks_for_confirmation_first(browser: WebDriver, server: Client) -> None:
    note_id = server.result("memory.add_note", {"projectId": "tend", "groupId": "draft", "text": "Delete me."})["id"]
    load(browser, server, project_route("tend"))
    browser.find_element(By.CSS_SELECTOR, f'#recent-list button[data-id="{note_id}"]').click()
    wait_for(lambda: by_id(browser, "note-dialog").get_attribute("open") is not None, what="the note view")
    by_id(browser, "note-delete").click()
    assert by_id(browser, "note-confirm").is_displayed()
    assert browser.switch_to.active_element == by_id(browser, "note-delete-confirm")
    by_id(browser, "note-delete-cancel").click()
    assert not by_id(browser, "note-confirm").is_displayed()
    assert server.result("memory.get", {"id": note_id})["text"] == "Delete me."

    by_id(browser, "note-delete").click()
    by_id(browser, "note-delete-confirm").click()
    wait_for(lambda: by_id(browser, "note-dialog").get_attribute("open") is None, what="the note view to close")
    assert server.call("memory.get", {"id": note_id})["error"]["code"] == -32004
    wait_for(lambda: not browser.find_elements(By.CSS_SELECTOR, f'#recent-list [data-id="{note_id}"]'), what="the note to leave the list")


def test_note_text_that_looks_like_html_is_shown_as_text_and_never_runs(browser: WebDriver, server: Client) -> None:
    load(browser, server, project_route("xss"))
    wait_for(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#recent-list li.note")) == 3, what="the notes")
    main_text = by_id(browser, "main").text
    for note in XSS_NOTES:
        assert note["text"].strip() in main_text
    assert "<b onmouseover=alert(3)>bold title</b>" in main_text
    assert browser.find_elements(By.CSS_SELECTOR, f"#main :is({SERVER_MARKUP})") == []
    hits = search(browser, "script img svg", "keyword")
    assert {mark.text for hit in hits for mark in hit.find_elements(By.TAG_NAME, "mark")} >= {"script", "img", "svg"}
    assert browser.find_elements(By.CSS_SELECTOR, f"#main :is({SERVER_MARKUP})") == []
    browser.find_element(By.CSS_SELECTOR, "#recent-list .note-open").click()
    wait_for(lambda: by_id(browser, "note-dialog").get_attribute("open") is not None, what="the note view")
    shown = {by_id(browser, "note-text").get_attribute("value"), by_id(browser, "note-title").get_attribute("value")}
    assert shown & {note["text"] for note in XSS_NOTES}
    assert browser.find_elements(By.CSS_SELECTOR, f"dialog :is({SERVER_MARKUP})") == []
    assert_no_alert(browser)
    assert browser.title == "mcp-memory"
    assert errors_in(console(browser)) == []


def test_the_stats_view_shows_the_servers_counts_and_disk_size(browser: WebDriver, server: Client) -> None:
    load(browser, server, "#/stats")
    stats = server.result("memory.stats", {})
    assert by_id(browser, "stat-notes").text == str(stats["notes"])
    assert by_id(browser, "stat-disk").text.endswith(f"({stats['diskBytes']} bytes)")
    tables = {table.find_element(By.TAG_NAME, "caption").text: table for table in browser.find_elements(By.CSS_SELECTOR, ".tables table")}
    for caption, key in (("notes by home namespace", "byNamespace"), ("notes by project", "byProject"), ("notes by group, all projects", "byGroup")):
        rows = tables[caption].find_elements(By.CSS_SELECTOR, "tbody tr")
        assert {row.find_elements(By.TAG_NAME, "td")[0].text: int(row.find_elements(By.TAG_NAME, "td")[1].text) for row in rows} == stats[key]


def test_the_keyboard_reaches_every_control_in_order_with_a_visible_focus(browser: WebDriver, server: Client) -> None:
    load(browser, server, project_route("demo-app"))
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#recent-list li.note"), what="recent notes")
    focused: list[str] = []
    for _ in range(30):
        ActionChains(browser).send_keys(Keys.TAB).perform()
        focused.append(
            browser.execute_script(
                "const e = document.activeElement, s = getComputedStyle(e);"
                "if (e === document.body) return 'BODY';"  # past the last control
                "if (s.outlineStyle === 'none' || parseFloat(s.outlineWidth) < 2) return 'INVISIBLE ' + (e.id || e.textContent);"
                "return e.id || e.dataset.project || e.dataset.group || e.dataset.tag || e.textContent.trim()"
            )
        )
    assert not [name for name in focused if name.startswith("INVISIBLE")], focused
    assert focused[:4] == ["mcp-memory", "nav-projects", "nav-stats", "nav-namespaces"]
    assert focused.index("Token refresh") < focused.index("global-key") < focused.index("Look up") < focused.index("BODY")
    assert focused.index("demo-app") < focused.index("all groups") < focused.index("search-input")
    order = [focused.index(name) for name in ("search-input", "search-mode", "search-topk", "search-submit")]
    assert order == sorted(order) and order[-1] - order[0] == 3

    by_id(browser, "search-input").send_keys("conventions test" + Keys.ENTER)
    first = wait_for(lambda: browser.find_element(By.CSS_SELECTOR, "#search-results .note-open"), what="results")
    browser.execute_script("arguments[0].focus()", first)
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    wait_for(lambda: by_id(browser, "note-dialog").get_attribute("open") is not None, what="the note view")
    assert browser.switch_to.active_element == by_id(browser, "note-text")
    ActionChains(browser).send_keys(Keys.ESCAPE).perform()
    wait_for(lambda: by_id(browser, "note-dialog").get_attribute("open") is None, what="Escape to close the note view")
    assert browser.switch_to.active_element == first


def luminance(css_color: str) -> float:
    red, green, blue = (int(part) for part in css_color[css_color.index("(") + 1 : css_color.index(")")].split(",")[:3])
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def keep_shot(browser: WebDriver, tmp_path: Path, name: str) -> bytes:
    data = browser.get_screenshot_as_png()
    (tmp_path / name).write_bytes(data)
    keep = os.environ.get("MCP_MEMORY_DASHBOARD_SHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / name).write_bytes(data)
    return data


def test_the_page_reads_in_light_and_dark_on_a_laptop_and_a_phone(browser: WebDriver, server: Client, tmp_path: Path) -> None:
    load(browser, server, project_route("demo-app"))
    search(browser, "refresh token", "hybrid")
    background = lambda: browser.execute_script("return getComputedStyle(document.body).backgroundColor")  # noqa: E731
    assert luminance(background()) > 0.8
    light = keep_shot(browser, tmp_path, "dashboard.png")
    set_color_scheme(browser, "dark")
    wait_for(lambda: luminance(background()) < 0.2, what="the dark colours")
    dark = keep_shot(browser, tmp_path, "dashboard-dark.png")
    for shot in (light, dark):
        assert png_size(shot)[0] >= 1200 and len(shot) < 400_000

    browser.set_window_size(390, 844)
    wait_for(lambda: browser.execute_script("return innerWidth") < 500, what="the phone width")
    assert browser.execute_script("return document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    sidebar, main = (browser.find_element(By.CSS_SELECTOR, selector).rect for selector in (".sidebar", "#main"))
    assert sidebar["y"] + sidebar["height"] <= main["y"]  # stacked, not side by side
    assert by_id(browser, "search-input").rect["width"] > 250
    keep_shot(browser, tmp_path, "dashboard-phone.png")
    assert errors_in(console(browser)) == []


def test_a_1000_note_project_paints_and_searches_within_a_second(browser: WebDriver, server: Client, tmp_path: Path) -> None:
    load(browser, server, project_route("big"))
    timings = browser.execute_script(
        "const paint = performance.getEntriesByName('first-contentful-paint')[0];"
        "return {firstPaint: paint ? paint.startTime : null, ready: performance.getEntriesByName('mcp-memory:ready')[0].startTime}"
    )
    hits = search(browser, "billing service retries invoices", "hybrid")
    assert len(hits) == 10
    timings["search"] = browser.execute_script("const m = performance.getEntriesByName('mcp-memory:search'); return m[m.length - 1].duration")
    (tmp_path / "timings.json").write_text(json.dumps(timings))
    print(f"dashboard timings, {BIG_NOTES} notes (ms): {timings}")
    assert timings["firstPaint"] is not None and timings["firstPaint"] < SECOND, timings
    assert timings["ready"] < SECOND, timings
    assert timings["search"] < SECOND, timings


def test_namespaces_offer_a_reembed_that_shows_progress_until_nothing_remains(
    browser: WebDriver, ollama: FakeOllamaServer, tmp_path: Path
) -> None:
    with HttpServer(tmp_path / "home", config=embedder_config(ollama)) as running:
        client = Client(running)
        notes = [{"projectId": "moving", "groupId": "g", "text": f"note number {n} about {TOPICS[n % 10]}"} for n in range(REEMBED_NOTES)]
        old = client.result("memory.add_notes", {"notes": notes})["namespace"]
        new = client.result("memory.set_config", {"embedder": {"model": OTHER_MODEL}})["effectiveNamespace"]
        load(browser, client, "#/namespaces")
        row = browser.find_element(By.CSS_SELECTOR, f'#namespaces tr[data-namespace="{old}"]')
        assert row.find_elements(By.TAG_NAME, "td")[1].text == str(REEMBED_NOTES)
        browser.execute_script(  # what the status line and the bar show, as the page changes
            "window.seen = []; new MutationObserver(() => {"
            "const s = document.getElementById('reembed-status'), p = document.getElementById('reembed-progress');"
            "const t = s && s.textContent ? `${s.textContent} [${p.value}/${p.max}]` : '';"
            "if (t && t !== window.seen[window.seen.length - 1]) window.seen.push(t);"
            "}).observe(document.body, {subtree: true, childList: true, characterData: true});"
        )
        by_id(browser, "reembed-all").click()
        wait_for(lambda: by_id(browser, "status").text.startswith("Done"), timeout=60, what="the re-embed to finish")
        seen = browser.execute_script("return window.seen")
        steps = [f"Re-embedded {done} of {REEMBED_NOTES} into {new}; {REEMBED_NOTES - done} remaining. [{done}/{REEMBED_NOTES}]" for done in (100, 200)]
        assert seen == [*steps, f"Done: {REEMBED_NOTES} notes re-embedded. [{REEMBED_NOTES}/{REEMBED_NOTES}]"]  # the last step and Done come in one task
        assert by_id(browser, "status").text == f"Done: {REEMBED_NOTES} notes re-embedded."
        assert client.result("memory.stats", {})["byNamespace"] == {new: REEMBED_NOTES}
        assert by_id(browser, "reembed-all").get_attribute("disabled") is not None
        client.http.close()


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory, ollama: FakeOllamaServer) -> Iterator[Client]:
    home = tmp_path_factory.mktemp("guarded")
    with HttpServer(home, config=embedder_config(ollama), env={"MCP_MEMORY_HTTP_TOKEN": TOKEN}, token=TOKEN) as running:
        client = Client(running)
        client.result("memory.add_note", {"projectId": "secret-project", "groupId": "g", "text": "The launch code is swordfish."})
        yield client
        client.http.close()


def token_form_shown(browser: WebDriver) -> bool:
    return by_id(browser, "token-form").is_displayed() and not by_id(browser, "app").is_displayed()


def only_refusals(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Console errors other than the browser's own line for each 401 answer."""
    return [entry for entry in errors_in(entries) if "401 (Unauthorized)" not in entry["message"]]


def test_with_a_token_set_the_page_shows_no_data_until_the_token_is_given(browser: WebDriver, guarded: Client) -> None:
    base = guarded.server.base_url
    assert httpx.get(f"{base}/").status_code == 200  # the files load without the token, the data does not
    browser.get(f"{base}/")
    wait_for(lambda: token_form_shown(browser), what="the token form")
    assert by_id(browser, "token-input").get_attribute("type") == "password"
    assert "swordfish" not in browser.page_source and "secret-project" not in browser.page_source

    by_id(browser, "token-input").send_keys("not-the-token" + Keys.ENTER)
    wait_for(lambda: by_id(browser, "token-error").text == "The server refused this token.", what="the refusal")
    assert token_form_shown(browser) and "secret-project" not in browser.page_source
    assert browser.execute_script("return sessionStorage.length") == 0

    by_id(browser, "token-input").send_keys(TOKEN + Keys.ENTER)
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, '#project-list a[data-project="secret-project"]'), what="the projects")
    assert browser.execute_script("return sessionStorage.getItem('mcp-memory.token')") == TOKEN
    assert browser.execute_script("return [localStorage.length, document.cookie]") == [0, ""]

    browser.refresh()  # the same tab keeps it
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, '#project-list a[data-project="secret-project"]'), what="the projects after a reload")
    browser.find_element(By.CSS_SELECTOR, '#project-list a[data-project="secret-project"]').click()
    wait_for(lambda: "The launch code is swordfish." in by_id(browser, "main").text, what="the note")

    first_tab = browser.current_window_handle
    browser.switch_to.new_window("tab")  # another tab does not have it
    browser.get(f"{base}/")
    wait_for(lambda: token_form_shown(browser), what="the token form in a new tab")
    assert "swordfish" not in browser.page_source
    browser.close()
    browser.switch_to.window(first_tab)

    by_id(browser, "forget-token").click()
    wait_for(lambda: token_form_shown(browser), what="the token form after forgetting")
    assert "swordfish" not in browser.page_source
    assert browser.execute_script("return sessionStorage.length") == 0
    assert only_refusals(console(browser)) == []


# -- knowledge that changes: importance, expiry, supersession chains, the graph of links --------


def open_note(browser: WebDriver, note_id: str, where: str = "#recent-list") -> None:
    browser.find_element(By.CSS_SELECTOR, f'{where} button[data-id="{note_id}"]').click()
    wait_for(lambda: by_id(browser, "note-dialog").get_attribute("open") is not None, what="the note view")


def test_the_note_view_shows_importance_expiry_and_the_supersession_chain(browser: WebDriver, server: Client) -> None:
    older = server.result("memory.add_note", {"projectId": "chain", "groupId": "ci", "title": "CI on Jenkins", "text": "CI runs on Jenkins."})["id"]
    middle = server.result("memory.add_note", {"projectId": "chain", "groupId": "ci", "title": "CI on Travis", "text": "CI runs on Travis.", "supersedes": [older]})["id"]
    newest = server.result(
        "memory.add_note",
        {"projectId": "chain", "groupId": "ci", "title": "CI on Actions", "text": "CI runs on GitHub Actions.", "supersedes": [middle],
         "importance": 0.9, "expiresAt": "2999-01-01T00:00:00Z"},
    )["id"]
    load(browser, server, project_route("chain"))
    items = browser.find_elements(By.CSS_SELECTOR, "#recent-list li.note")
    assert [item.get_attribute("data-id") for item in items] == [newest]  # superseded notes are left out
    assert "importance 0.9" in items[0].text and "expires 2999-01-01" in items[0].text
    open_note(browser, newest)
    assert by_id(browser, "note-importance").get_attribute("value") == "0.9"
    assert "expires 2999-01-01 00:00:00 UTC" in by_id(browser, "note-meta").text
    chain = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#chain-list li"), what="the chain")
    assert [li.get_attribute("class") for li in chain] == ["current", "older"]
    chain[1].find_element(By.TAG_NAME, "button").click()  # walk down the chain
    wait_for(lambda: by_id(browser, "note-heading").text == "CI on Travis", what="the older note")
    chain = wait_for(lambda: [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#chain-list li")] == ["CI on Actions", "CI on Travis", "CI on Jenkins"] or None, what="the whole chain")
    assert chain


def test_marking_a_note_as_superseding_another_in_the_page_hides_the_older_one(browser: WebDriver, server: Client) -> None:
    old = server.result("memory.add_note", {"projectId": "mark", "groupId": "g", "title": "Port 8000", "text": "The dev server listens on port 8000."})["id"]
    new = server.result("memory.add_note", {"projectId": "mark", "groupId": "g", "title": "Port 9000", "text": "The dev server listens on port 9000."})["id"]
    load(browser, server, project_route("mark"))
    open_note(browser, new)
    by_id(browser, "note-supersedes").send_keys(old)
    by_id(browser, "note-importance").clear()
    by_id(browser, "note-importance").send_keys("0.75")
    by_id(browser, "note-save").click()
    wait_for(lambda: by_id(browser, "note-dialog").get_attribute("open") is None, what="the note view to close")
    assert server.result("memory.get", {"id": old})["supersededBy"] == [new]
    assert server.result("memory.get", {"id": new})["importance"] == 0.75
    wait_for(lambda: not browser.find_elements(By.CSS_SELECTOR, f'#recent-list [data-id="{old}"]'), what="the older note to leave the list")
    by_id(browser, "show-superseded").click()
    shown = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, f'#recent-list li[data-id="{old}"]'), what="the superseded note")
    assert "superseded" in shown[0].text


def test_a_refused_supersedes_is_shown_naming_its_field(browser: WebDriver, server: Client) -> None:
    note = server.result("memory.add_note", {"projectId": "mark", "groupId": "g", "text": "Supersedes nothing real."})["id"]
    load(browser, server, project_route("mark"))
    open_note(browser, note)
    by_id(browser, "note-supersedes").send_keys(note)
    by_id(browser, "note-save").click()
    error = wait_for(lambda: by_id(browser, "note-error").text, what="the refusal")
    assert "patch.supersedes" in error and "itself" in error


def test_the_graph_view_draws_a_notes_links_and_opens_a_linked_note(browser: WebDriver, server: Client) -> None:
    add = lambda title: server.result("memory.add_note", {"projectId": "graph", "groupId": "g", "title": title, "text": f"{title}."})["id"]  # noqa: E731
    hub, spoke, far, old = add("Hub"), add("Spoke"), add("Far"), add("Old hub")
    server.result("memory.link", {"fromId": hub, "toId": spoke, "relation": "relates_to"})
    server.result("memory.link", {"fromId": spoke, "toId": far, "relation": "depends_on"})
    server.result("memory.link", {"fromId": hub, "toId": old, "relation": "supersedes"})
    load(browser, server, project_route("graph"))
    open_note(browser, hub)
    graph = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "svg#note-graph"), what="the graph")[0]
    nodes = {n.get_attribute("data-id") for n in graph.find_elements(By.CSS_SELECTOR, "g.node")}
    assert nodes == {hub, spoke, far, old}
    edges = {(e.get_attribute("data-from"), e.get_attribute("data-to"), e.get_attribute("data-relation")) for e in graph.find_elements(By.CSS_SELECTOR, "g.edge")}
    assert edges == {(hub, spoke, "relates_to"), (spoke, far, "depends_on"), (hub, old, "supersedes")}
    assert graph.find_elements(By.CSS_SELECTOR, f'g.edge.supersedes[data-to="{old}"]')
    graph.find_element(By.CSS_SELECTOR, f'g.node[data-id="{far}"]').click()
    wait_for(lambda: by_id(browser, "note-heading").text == "Far", what="the linked note to open")
    assert resource_urls(browser) and all(url.startswith("http://127.0.0.1") for url in resource_urls(browser))

"""A real headless Chromium (Debian's ``chromium`` and ``chromium-driver``) driven by Selenium.

The browser cannot reach anything but the loopback: every name other than 127.0.0.1 and
localhost fails to resolve and every proxied request goes to a closed port, so a stray
reference to a CDN or a web font fails at once instead of leaving the machine. There is no
fallback and no skip: without the browser the tests fail and say how to install it.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

INSTALL = "apt-get update && apt-get install -y chromium chromium-driver"
FLAGS = (
    "--no-sandbox",
    "--headless=new",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--proxy-server=socks5://127.0.0.1:1",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
)


def start_browser(width: int = 1280, height: int = 860) -> WebDriver:
    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.fail(f"the browser tests need Debian's chromium and chromium-driver; install them: {INSTALL}")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--window-size={width},{height}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(driver))


def set_color_scheme(browser: WebDriver, scheme: str) -> None:
    """Emulate ``prefers-color-scheme: light|dark`` for the current tab."""
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})


def wait_for(condition: Callable[[], Any], timeout: float = 10, what: str = "the condition") -> Any:
    """Poll ``condition`` until it returns something truthy; fail with ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = condition()
        except Exception as exc:  # an element not there yet, or stale after a re-render
            last_error = exc
            value = None
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}" + (f" (last error: {last_error!r})" if last_error else ""))


def console(browser: WebDriver) -> list[dict[str, Any]]:
    """The browser's console and network log since the last call."""
    return browser.get_log("browser")


def resource_urls(browser: WebDriver) -> list[str]:
    """Every URL the page loaded (navigation, assets, fetch), from the Performance API."""
    return browser.execute_script(
        "return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource')).map(e => e.name)"
    )

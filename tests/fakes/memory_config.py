"""An in-memory ``ConfigRepository`` for tests."""

from __future__ import annotations

import threading
from collections.abc import Callable

from local_mcp_memory.application.settings import Settings


class InMemoryConfigRepository:
    """``settings`` is what is stored; ``saves`` counts the updates written."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.saves = 0
        self._lock = threading.Lock()

    def load(self) -> Settings:
        return self.settings

    def update(self, change: Callable[[Settings], Settings]) -> Settings:
        with self._lock:
            self.settings = change(self.settings)
            self.saves += 1
            return self.settings

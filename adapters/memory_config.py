"""An in-memory ``ConfigRepository`` for tests."""

from __future__ import annotations

from application.settings import Settings


class InMemoryConfigRepository:
    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.saves = 0

    @property
    def location(self) -> str:
        return "memory://config"

    def load(self) -> Settings:
        return self.settings

    def save(self, settings: Settings) -> None:
        self.settings = settings
        self.saves += 1

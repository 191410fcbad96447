"""Domain errors.

    DomainError
    └── InvalidValue          a value broke a rule of its type (type, rule, value)
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """Base of every error the domain raises."""


class InvalidValue(DomainError):
    """A value object refused a value.

    ``field`` is filled in by whoever knows where the value came from (the wire layer
    names the request field); the domain knows only the type and the rule.
    """

    def __init__(self, type_name: str, rule: str, value: Any, field: str | None = None) -> None:
        self.type_name = type_name
        self.rule = rule
        self.value = value
        self.field = field
        super().__init__(f"{type_name} {rule} (got {_preview(value)})")

    def at(self, field: str) -> InvalidValue:
        """The same error, placed at a request field."""
        return InvalidValue(self.type_name, self.rule, self.value, field)


def _preview(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."

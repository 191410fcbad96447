"""Domain errors.

    DomainError
    └── InvalidValue          a value broke a rule of its type (type, rule, value)
"""

from __future__ import annotations

import re
from typing import Any


class DomainError(Exception):
    """Base of every error the domain raises."""


class InvalidValue(DomainError):
    """A value object refused a value.

    ``field`` is a path to where the value sits. A value object names its own attribute
    when the rule is about one (``text``, ``metadata``); whoever knows where the value came
    from places it inside the request with ``at`` (``patch.text``, ``notes[2].groupId``).
    Paths use the domain's attribute names; the edge translates them to wire names.
    """

    def __init__(self, type_name: str, rule: str, value: Any, field: str | None = None) -> None:
        self.type_name = type_name
        self.rule = rule
        self.value = value
        self.field = field
        super().__init__(f"{type_name} {rule} (got {_preview(value)})")

    def field_rule(self) -> str:
        """The rule as said of the field the value sits at ("must match …" for ``groupId``):
        a rule that names the attribute the field ends in ("text must be …" at
        ``notes[1].text``) does not name it twice. Without a field, the rule as it is (the
        type's name is then its subject)."""
        if self.field is None:
            return self.rule
        attribute = re.split(r"[.\[]", self.field)[-1]
        for said in (attribute, attribute.replace("_", " ")):
            if self.rule.startswith(said + " "):
                return self.rule[len(said) + 1 :]
        return self.rule

    def at(self, field: str) -> InvalidValue:
        """The same error, placed at ``field``; a field it already names becomes a path
        inside it (``patch`` and ``text`` give ``patch.text``, ``notes[2]`` and ``groupId``
        give ``notes[2].groupId``)."""
        return InvalidValue(self.type_name, self.rule, self.value, join_path(field, self.field))


def join_path(outer: str, inner: str | None) -> str:
    """``inner`` placed inside ``outer``: ``a`` and ``b`` give ``a.b``, ``a`` and ``[2]`` give ``a[2]``."""
    if not inner:
        return outer
    return f"{outer}{inner}" if inner.startswith("[") else f"{outer}.{inner}"


def _preview(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."

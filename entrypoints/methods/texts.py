"""The phrases several method descriptions share (what an agent reads of a tool): the rules
of the common fields. Plain strings, imported at start-up by the MCP instructions too."""

from __future__ import annotations

GROUP_RULE = (
    '"global" for project-wide conventions and decisions, "feature-<name>" for a feature, "task-<id>" for a task; '
    'letters, digits, "-" and "_".'
)

PROJECT_RULE = "Omit it for this session's project; else an absolute or ~ path, or an opaque id."

GROUPS = f"groupId: {GROUP_RULE}"
PROJECT = f"projectId: {PROJECT_RULE}"
EXPIRY = "RFC 3339, in the future: the note is forgotten then (a freeze, a temporary workaround)."

STANDARD_KEYS = (
    "Standard keys: global.memory.embedder.provider (\"ollama\" | \"openai\", a recommendation), "
    "global.memory.embedder.model (e.g. \"nomic-embed-text\"), "
    "global.memory.groupDefaults (e.g. {\"featurePrefix\": \"feature-\", \"taskPrefix\": \"task-\"}), "
    "global.project.conventions (a string or an object)."
)

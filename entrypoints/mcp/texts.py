"""What the agent reads beyond one tool: the server's instructions, the phrases several
tool descriptions share, and descriptions of the common argument fields. Each tool's own
title, description and advice on cut results are in its method's module
(``entrypoints.methods``).
"""

from __future__ import annotations

GROUP_RULE = (
    '"global" for project-wide conventions, decisions and policy; '
    '"feature-<name>" for one feature\'s topic (e.g. "feature-auth"); '
    '"task-<id>" for one task (e.g. "task-142"). Letters, digits, "-" and "_" only, case-sensitive.'
)

PROJECT_RULE = (
    "Omit it to use the project this server was started for (its working directory "
    "or --project); otherwise an absolute path, a ~ path or an opaque id."
)

GROUPS = f"groupId: {GROUP_RULE}"
PROJECT = f"projectId: {PROJECT_RULE}"
EXPIRY = (
    "expiresAt (optional, RFC 3339, in the future): from then on the note is forgotten — for facts "
    "that stop being true (a release freeze, a temporary workaround)."
)

KNOWLEDGE = (
    "supersedes: ids of older notes this one replaces (they leave search results; memory_get still reads them). "
    "importance: 0..1, default 0.5; 0.8 or more for facts that must never fade."
)

STANDARD_KEYS = (
    "Standard keys: global.memory.embedder.provider (\"ollama\" | \"openai\", a recommendation), "
    "global.memory.embedder.model (e.g. \"nomic-embed-text\"), "
    "global.memory.groupDefaults (e.g. {\"featurePrefix\": \"feature-\", \"taskPrefix\": \"task-\"}), "
    "global.project.conventions (a string or an object)."
)

INSTRUCTIONS = f"""\
mcp-memory is a long-term memory for this project, kept on this machine across sessions.
- At the start of a task, and before deciding something that earlier work may have settled, call memory_search with a short description of what you need (add groupId to narrow it). Read global conventions with memory_get_global (key "global.project.conventions").
- After a decision, a convention, a non-obvious fix or finding, or at the end of a task, store one short self-contained note per fact with memory_add_note: a title, the text, a few tags. Do not store secrets, credentials or whole files.
- Choose the {GROUPS}
- {PROJECT}
- Long note texts are shortened in search and list results; memory_get with the note's id returns the whole text. A result too long for one tool output leaves its last entries out and says so in "truncated", with how to get the rest.
"""

LEFT_OUT_ELSEWHERE = "the memory.* JSON-RPC methods and `mcp-memory export` are not cut"
"""How the agent gets what a cut result left out, when its method says nothing more
(``Method.left_out``; ``bounds``, ``fit``)."""

FIELDS: dict[str, str] = {
    "projectId": PROJECT_RULE,
    "groupId": GROUP_RULE,
    "text": "The note itself: one self-contained fact, decision or summary.",
    "title": "A short headline for the note.",
    "tags": "Case-sensitive labels, e.g. [\"decision\", \"api\"].",
    "source": "Where the note comes from, e.g. a file path, URL or \"user\".",
    "createdAt": "ISO 8601 UTC, e.g. 2024-01-15T10:30:00Z; omit for now.",
    "metadata": "Any JSON object, e.g. {\"conversationId\": \"...\", \"messageRange\": \"12-20\"}.",
    "query": "What you are looking for, as a short description.",
    "id": "A note's id (a UUID), as returned by memory_add_note or a search.",
    "importance": "0..1, default 0.5.",
    "supersedes": "Ids of older notes this one replaces.",
    "includeSuperseded": "Also return superseded notes.",
    "key": "A setting key starting with \"global.\", e.g. \"global.project.conventions\".",
}

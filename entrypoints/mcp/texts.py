"""What the agent reads beyond one tool: the server's instructions and descriptions of the
common argument fields. Each tool's own title, description and advice on cut results are
in its method's module, and the phrases several of them share in ``entrypoints.methods.texts``.
"""

from __future__ import annotations

from local_mcp_memory.entrypoints.methods.texts import EXPIRY, GROUP_RULE, GROUPS, PROJECT_RULE

INSTRUCTIONS = f"""\
mcp-memory is this project's long-term memory, kept on this machine across sessions.
- Before deciding something earlier work may have settled (conventions, architecture, past bugs), call memory_search with a short description of what you need. Notes already in your context carry their ids: memory_get reads one whole.
- After a decision, a convention, a non-obvious fix or finding, or at the end of a task, store one short self-contained note per fact with memory_add_note (a title, the text, a few tags). To correct a note, memory_update it rather than adding another. Never store secrets, credentials or whole files.
- {GROUPS}
- projectId: omit it for this session's project.
- Search and list results shorten long texts (memory_get returns the whole note); a result too long for one output says in "truncated" what it left out and how to get it.
"""

LEFT_OUT_ELSEWHERE = "the memory.* JSON-RPC methods and `mcp-memory export` are not cut"
"""How the agent gets what a cut result left out, when its method says nothing more
(``Method.left_out``; ``bounds``, ``fit``)."""

FIELDS: dict[str, str] = {
    "projectId": PROJECT_RULE,
    "groupId": GROUP_RULE,
    "text": "One self-contained fact, decision or summary.",
    "tags": 'e.g. ["decision", "api"]; case-sensitive.',
    "source": 'e.g. a file path, a URL or "user".',
    "createdAt": "ISO 8601 UTC; omit for now.",
    "expiresAt": EXPIRY,
    "id": "A note's id, as memory_add_note or a search answers it.",
    "importance": "0..1, default 0.5; 0.8 or more never expires by default.",
    "supersedes": "Ids of older notes this one replaces; they leave search results (memory_get still reads them).",
    "includeSuperseded": "Also return superseded notes.",
    "key": 'A setting key starting with "global.", e.g. "global.project.conventions".',
}

RESULT_FIELDS: dict[str, str] = {
    "possiblySupersedes": (
        "Ids of older notes of this project that the new note may replace (same subject, maybe a changed "
        "fact); possibly empty. Check each with memory_get; pass the ones really made obsolete in supersedes "
        "(memory_update of the new note) so they leave search and recall."
    ),
}

"""What the agent reads: the server's instructions, each tool's title and description,
and descriptions of the common argument fields. Keyed by ``memory.*`` method name, so a
method added to ``entrypoints.methods.METHODS`` needs an entry here (a unit test checks).
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

TITLES: dict[str, str] = {
    "memory.add_note": "Store a note",
    "memory.add_notes": "Store several notes",
    "memory.search": "Search notes by meaning",
    "memory.get": "Read one note",
    "memory.update": "Change a note",
    "memory.list_recent": "List recent notes",
    "memory.get_config": "Show the server's configuration",
    "memory.set_config": "Change the embedder",
    "memory.upsert_global": "Set a global setting",
    "memory.get_global": "Read a global setting",
    "memory.delete": "Delete a note",
    "memory.stats": "Count notes",
    "memory.reembed": "Re-embed notes into the current model",
    "memory.drop_namespace": "Drop an old model's vectors",
}

DESCRIPTIONS: dict[str, str] = {
    "memory.add_note": (
        "Store one note in long-term memory so that later sessions can find it by meaning. "
        "Store it when something worth remembering happens: a decision and its reason, a project "
        "convention, a non-obvious fix, a finding, or a summary at the end of a task. Keep a note short "
        "and self-contained (one fact, readable without this conversation); give it a title and a few "
        f"tags. Never store secrets. {GROUPS} {PROJECT} Returns the new note's id."
    ),
    "memory.add_notes": (
        "Store several notes at once (1..1000), each shaped like memory_add_note's arguments; use it "
        f"to save a batch of findings or an imported list. {GROUPS} {PROJECT} Returns the ids in order."
    ),
    "memory.search": (
        "Find stored notes by meaning. Call it at the start of a task and before deciding anything an "
        "earlier session may have settled (conventions, architecture, past bugs). Write the query as a "
        "short description of what you need, not keywords. Leave groupId out to search the whole "
        "project, or set it to narrow to one topic (\"global\", \"feature-<name>\", \"task-<id>\"). "
        "tags: only notes carrying all of them. since/until: ISO 8601 UTC bounds on createdAt. "
        "mode: leave it out for the default, \"hybrid\" (meaning and exact words blended); \"semantic\" "
        "(meaning only, for paraphrases) or \"keyword\" (exact words only, e.g. a function name or error code). "
        f"topK: 1..100, default 5. {PROJECT} Results are sorted by score (0..1, 1 most similar); long "
        "texts are shortened: call memory_get with the id for the whole note."
    ),
    "memory.get": (
        "Read one note by its id, with its whole text (search and list results shorten long texts). "
        "Use it when a result says its text was cut, or to check a note before changing it."
    ),
    "memory.update": (
        "Change fields of an existing note by id: patch holds only the fields to change (title, text, "
        "tags, source, groupId, metadata). Use it to correct or extend a note instead of adding a "
        "near-duplicate. Changing text re-embeds the note; a groupId change moves it to another topic."
    ),
    "memory.list_recent": (
        "List the newest notes of a project, newest first, optionally of one groupId and with all of "
        "the given tags. Use it to see what was recorded lately (e.g. at the start of a session), when "
        f"there is no specific question to search for. limit: 1..200, default 20. {PROJECT}"
    ),
    "memory.get_config": (
        "Show the server's configuration: the embedder (provider, model, dimension), the store, the "
        "config and data paths, and the default transport. Never shows an API key."
    ),
    "memory.set_config": (
        "Change the embedder (provider \"local\", \"openai\" or \"ollama\"; model; baseUrl; apiKey). "
        "Only do this when the user asks: a new provider or model starts a new namespace, and notes "
        "stored under the old one are not found until re-embedded (memory_reembed)."
    ),
    "memory.upsert_global": (
        "Create or replace a project-wide setting in the reserved \"global\" group: key must start with "
        f"\"global.\"; value is any JSON value. {STANDARD_KEYS} Use it when the user states a convention "
        f"or preference that should hold for every future session. {PROJECT}"
    ),
    "memory.get_global": (
        "Read a project-wide setting by key (found is false when it was never set). Read "
        "\"global.project.conventions\" at the start of work on a project, and the embedder keys before "
        f"suggesting an embedder. {STANDARD_KEYS} {PROJECT}"
    ),
    "memory.delete": (
        "Delete one note by id, with its vectors. Only when the note is wrong or the user asks; to "
        "correct a note prefer memory_update."
    ),
    "memory.stats": (
        "Count notes by namespace, group and tag, with vectors per namespace and bytes on disk. "
        "projectId: omit it for this project; null for every project."
    ),
    "memory.reembed": (
        "After the embedder changed (memory_set_config), give notes of older namespaces a vector of the "
        "current one, at most limit notes per call: call again until remaining is 0. Only when the "
        "user asks."
    ),
    "memory.drop_namespace": (
        "Remove the vectors of an old namespace (\"provider:model:dim\") that no note calls home any "
        "more, after memory_reembed. Only when the user asks."
    ),
}

LEFT_OUT: dict[str, str] = {
    "memory.search": (
        "call memory_search again with a smaller topK or a narrower groupId or tags; memory_get with an id "
        "returns one whole note"
    ),
    "memory.list_recent": (
        "call memory_list_recent again with a smaller limit, a groupId or tags; memory_get with an id "
        "returns one whole note"
    ),
    "memory.get": (
        "the note is too long for one tool result; `mcp-memory export` or the memory.get JSON-RPC method "
        "give it whole"
    ),
    "memory.add_notes": (
        "every note was stored, only this list of their ids was cut; memory_list_recent lists the newest "
        "notes with their ids"
    ),
    "memory.get_global": (
        "the value is too long for one tool result; `mcp-memory export` or the memory.get_global JSON-RPC "
        "method give it whole"
    ),
    "memory.stats": "counts by namespace, project, group and tag come largest first; `mcp-memory stats` prints them all",
}
"""How the agent gets what a cut result left out, by method (``bounds``, ``fit``)."""

LEFT_OUT_ELSEWHERE = "the memory.* JSON-RPC methods and `mcp-memory export` are not cut"

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
    "key": "A setting key starting with \"global.\", e.g. \"global.project.conventions\".",
}


def fallback_description(method: str) -> str:
    return f"The {method} method of mcp-memory."

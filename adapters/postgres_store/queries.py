"""The SQL of the read side: the filter of a ``NoteFilter``, and the one statement that
answers a whole ``CandidateQuery`` (``candidates_sql``).

The hybrid question is one statement, one round trip, one snapshot. Its parts (CTEs):

* **semantic**: the ``depth`` nearest vectors of the namespace in scope, by cosine
  (pgvector ``<=>``). How it scans is decided inside the statement: ``scope_size`` counts the
  matching vectors up to ``EXACT_SCAN_MAX + 1`` through an index on the filter columns
  (``vectors_by_scope``, ``vectors_by_time``, ``vectors_by_tag``: the planner's pick); at
  most ``EXACT_SCAN_MAX`` of them are scored exactly (``exact``, an expression no index
  serves, so it is always a scan of the filtered rows); more go to the namespace's
  HNSW index (``approx``, with ``hnsw.iterative_scan = relaxed_order`` set on every
  connection, so the index keeps walking until ``depth`` rows pass the filter, then
  re-sorted exactly). If the index still gives fewer than ``depth`` (a filter keeping a tiny
  share of a huge namespace can exhaust ``hnsw.max_scan_tuples``), ``exact`` runs after all:
  a filter never returns a short list. Whichever part is not needed is skipped by
  PostgreSQL's one-time filter before it reads a row. When the caller knows the project
  holds at most ``EXACT_SCAN_MAX`` notes (``project_notes``), only the exact scan is written.
* **spread**: mean and population standard deviation of the query's cosine over the scope,
  all of it up to ``sample`` vectors, else the first ``sample`` in the order of a fixed hash
  of the note id (``hashtextextended``; a sample of the scope unrelated to the vectors' content
  or age), read through the ``vectors_by_sample`` index without visiting the rest of the scope
  (``spread_part``: one scan for a whole project, picks then vectors for a narrowed scope).
* **keyword**: the candidates of the process's in-memory BM25 (``keywords``: the local
  store's ``keyword_index``, kept current by a change feed), passed in already filtered and
  ordered (by ``rank`` of the score, then newer, then smaller id), joined to their notes.
* **neighbours**: for each candidate, the matching note of its group just before and just
  after it by ``(created, written)``, through the ``(project, grp, created, written)`` index,
  with its cosine when it has a vector in the namespace.
* **docs**: the stored fields and home namespace of every note named above.

Expiry and supersession: with ``NoteFilter.now``, notes with ``expires <= now`` are left
out of every part, and so are superseded notes unless ``include_superseded``, inside the
filter (so they never shorten an answer). On ``notes`` the condition reads the row's
``expires`` and looks up the ``supersedes`` links into it; on ``vectors``,
which hold no copy of either, the statement first collects the project's hidden ids
(``hidden``: expired ones through the partial index on ``notes.expires``, few rows since
the store purges them every few minutes; superseded ones through the partial index
``links_superseding``) and the filter is ``note NOT IN (SELECT id FROM hidden)``, a hashed
lookup that keeps the scans of ``vectors_by_scope`` index-only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from local_mcp_memory.adapters.postgres_store.codec import escaped_tags
from local_mcp_memory.domain.note import NoteFilter
from local_mcp_memory.domain.time import TimeWindow

EXACT_SCAN_MAX = 5_000
"""Scopes of at most this many vectors are scanned exactly: measured at 384 dimensions, an
exact scan of 5,000 filtered vectors takes about as long as an HNSW walk (``bench.store_bench``)."""

HNSW_EF_SEARCH = 400
"""The HNSW walk's candidate list, matched to the graph's build options (``schema.HNSW_OPTIONS``,
m 8, ef_construction 32). Measured at 100k notes in one project (384-d vectors, 200 questions
against an exact scan, ``bench.hnsw_settings``): 400 on that graph gives recall@10 0.951 and
recall@30 0.902 for 2,620 buffers, where 200 on pgvector's default graph (m 16,
ef_construction 64, schema version 7) gave 0.944 and 0.902 for 2,550, at a third of the
build's CPU."""
HNSW_MAX_SCAN_TUPLES = 100_000
SESSION_SETTINGS = (
    # No parallel workers: the plan of ``exact`` is a Gather over a parallel scan, and
    # PostgreSQL starts its workers even when the branch's one-time filter then skips it,
    # which cost every HNSW search about 3 ms (6.7 against 3.3 ms at 100k notes); one
    # search per backend is also what a server shared by a team wants.
    "SET max_parallel_workers_per_gather = 0",
    # An exact scan sorts or hashes up to one row per vector in scope; the default 4 MB
    # spilled 100k rows to disk. Per sort or hash of a statement, on a server that a team
    # shares: no more than needed.
    "SET work_mem = '16MB'",
    "SET hnsw.iterative_scan = relaxed_order",
    f"SET hnsw.ef_search = {HNSW_EF_SEARCH}",
    f"SET hnsw.max_scan_tuples = {HNSW_MAX_SCAN_TUPLES}",
)


SUPERSEDED_SQL = """SELECT l.to_id AS id FROM links l JOIN notes s ON s.id = l.from_id
    WHERE l.relation = 'supersedes' AND {live}"""
"""The ids of superseded notes (SPEC §13): targets of a ``supersedes`` link whose source is
live (``{live}``: the source ``s`` not expired, or TRUE). Links are few; the partial index
``links_superseding`` holds just these."""


def hides(where: NoteFilter) -> bool:
    """Whether ``where`` leaves out notes a ``hidden`` CTE names (expired or superseded)."""
    return where.now is not None or not where.include_superseded


def hidden_cte(where: NoteFilter, params: dict[str, Any]) -> str:
    """``hidden``: the ids of the project's notes expired at ``now`` and, unless
    ``include_superseded``, of superseded notes, for ``filter_sql(..., by_id=True)``; only
    where ``hides(where)``."""
    return f"hidden AS MATERIALIZED ({hidden_sql(where, params)})"


def hidden_sql(where: NoteFilter, params: dict[str, Any]) -> str:
    """The SELECT of the ids ``hidden_cte`` names (links join notes of one project)."""
    params["project"] = where.project_id.value
    parts = []
    if where.now is not None:
        params["now"] = where.now
        parts.append("SELECT id FROM notes WHERE expires <= %(now)s AND project = %(project)s")
    if not where.include_superseded:
        parts.append(SUPERSEDED_SQL.format(live=_live_source(where)) + " AND s.project = %(project)s")
    return " UNION ALL ".join(parts)


def _live_source(where: NoteFilter) -> str:
    return "TRUE" if where.now is None else "(s.expires IS NULL OR s.expires > %(now)s)"


def filter_sql(where: NoteFilter, alias: str, params: dict[str, Any], *, by_id: bool = False) -> str:
    """The conditions of ``where`` on a table with ``project, grp, created, tags`` columns.
    With ``where.now``, expired notes are left out, and superseded ones unless
    ``where.include_superseded``: on ``notes`` by the row's own ``expires`` and a lookup of
    the links into it, or with ``by_id`` by its ``note`` column not being in the ``hidden``
    CTE (``hidden_cte``, which the statement must then define)."""
    parts = scope_conditions(where, alias, params)
    if where.now is not None:
        params["now"] = where.now
    if by_id:
        if hides(where):
            parts.append(f"{alias}.note NOT IN (SELECT id FROM hidden)")
        return " AND ".join(parts)
    if where.now is not None:
        parts.append(f"({alias}.expires IS NULL OR {alias}.expires > %(now)s)")
    if not where.include_superseded:
        parts.append(not_superseded_sql(alias, at_now=where.now is not None))
    return " AND ".join(parts)


def not_superseded_sql(alias: str, *, at_now: bool) -> str:
    """The condition that the note of row ``alias`` is not superseded (``SUPERSEDED_SQL``),
    by a source not expired at ``%(now)s`` when ``at_now``, else by any."""
    live = "(s.expires IS NULL OR s.expires > %(now)s)" if at_now else "TRUE"
    return f"NOT EXISTS ({SUPERSEDED_SQL.format(live=live)} AND l.to_id = {alias}.id)"


def scope_conditions(where: NoteFilter, alias: str, params: dict[str, Any]) -> list[str]:
    """The conditions of ``where``'s project, group, tags and time window."""
    params["project"] = where.project_id.value
    parts = [f"{alias}.project = %(project)s"]
    if where.group_id is not None:
        params["grp"] = where.group_id.value
        parts.append(f"{alias}.grp = %(grp)s")
    if where.tags.values:
        params["tags"] = escaped_tags(where.tags)
        parts.append(f"{alias}.tags @> %(tags)s::text[]")
    if where.window.since is not None:
        params["since"] = where.window.since
        parts.append(f"{alias}.created >= %(since)s")
    if where.window.until is not None:
        params["until"] = where.window.until
        parts.append(f"{alias}.created < %(until)s")
    return parts


class Part(NamedTuple):
    """One part of the statement: its CTEs, the SELECT of its output rows (see
    ``candidates_sql``; empty: none), and the SELECT of the note ids it names, whose docs
    (and for candidates, neighbours) the statement returns too."""

    ctes: list[str]
    output: str
    named: str | None = None


def candidates_sql(
    where: NoteFilter, *, space: int | None, dim: int, semantic: bool, keyword: bool, spread: bool,
    neighbours: bool, params: dict[str, Any], project_notes: int | None = None, given: bool = False, large: bool = False,
) -> str:
    """One statement answering a question. Rows ``(kind, id, created, score, std, n, seed,
    doc, home)``: kind ``s`` a semantic candidate (score: cosine), ``k`` a keyword candidate
    (score), ``p`` the spread (score: mean, std, n), ``n`` a neighbour of ``seed`` (score:
    cosine or null; n: 0 before, 1 after), ``d`` a note's doc and home. ``space`` None: the
    namespace holds no vectors. Needs ``q`` (the query vector), ``depth``, ``sample`` and
    ``terms`` in ``params`` as the parts asked for use them. ``project_notes``: how many notes
    the project holds, when the caller knows (its keyword index, just caught up): a project
    of at most ``EXACT_SCAN_MAX`` notes is scanned exactly without counting its scope.
    ``given``: the semantic candidates were found by the caller (``vector_cache``), their ids
    in ``given``: the statement returns their neighbours (without cosines: the caller has the
    vectors) and docs, not them. ``large``: the
    scope is known to hold more than ``EXACT_SCAN_MAX`` vectors (``vector_cache``): the HNSW
    walk runs without counting it first."""
    v_filter, vec = filter_sql(where, "v", params, by_id=True), f"%(q)s::vector({int(dim)})"
    vectors = None if space is None else int(space)
    parts: list[Part] = []
    if semantic and vectors is not None:
        small = project_notes is not None and project_notes <= EXACT_SCAN_MAX
        parts.append(semantic_part(vectors, int(dim), vec, v_filter, small=small, large=large))
    if given and vectors is not None:
        parts.append(Part([], "", "SELECT unnest(%(given)s::text[]) AS note"))
    if spread and vectors is not None:
        parts.append(spread_part(vectors, vec, v_filter, narrowed=narrowed(where)))
    if keyword:
        parts.append(keyword_part())
    if neighbours and (seeds := [part.named for part in parts if part.named]):
        n_filter = filter_sql(where, "n", params)
        parts.append(neighbours_part(seeds, vectors if semantic else None, vec, n_filter))
    if named := [part.named for part in parts if part.named]:
        parts.append(docs_part(named))
    if not parts:
        return ""
    by_id = vectors is not None and (semantic or spread) and hides(where)  # parts reading ``vectors``
    ctes = ([hidden_cte(where, params)] if by_id else []) + [cte for part in parts for cte in part.ctes]
    head = f"WITH {', '.join(ctes)} " if ctes else ""
    return head + " UNION ALL ".join(f"({part.output})" for part in parts if part.output)


def semantic_part(space: int, dim: int, vec: str, v_filter: str, *, small: bool = False, large: bool = False) -> Part:
    """The ``depth`` nearest vectors of the scope: exact scan of a small scope, HNSW walk of
    a large one, exact after all when the walk comes back short (module docstring). ``small``:
    the scope is known to hold at most ``EXACT_SCAN_MAX`` vectors (its project holds no more
    notes), so the exact scan runs without counting it first (5,000 index entries: 1-1.5 ms);
    ``large``: it holds more, so the HNSW walk runs without counting it."""
    output = "SELECT 's', note, created, cosine, NULL::float8, NULL::bigint, NULL, NULL, NULL FROM semantic"
    if small:
        return Part(
            [
                f"""semantic AS MATERIALIZED (
                    SELECT v.note, v.created, 1 - (v.embedding <=> {vec}) AS cosine FROM vectors v
                    WHERE v.space = {space} AND {v_filter}
                    ORDER BY cosine DESC, v.created DESC, v.note LIMIT %(depth)s)"""
            ],
            output,
            "SELECT note FROM semantic",
        )
    over = "TRUE" if large else f"(SELECT n FROM scope_size) > {EXACT_SCAN_MAX}"
    within = "FALSE" if large else f"(SELECT n FROM scope_size) <= {EXACT_SCAN_MAX}"
    count = [] if large else [
        f"""scope_size AS (
            SELECT count(*) AS n FROM (SELECT 1 FROM vectors v WHERE v.space = {space} AND {v_filter}
                                       LIMIT {EXACT_SCAN_MAX + 1}) x)"""
    ]
    return Part(
        [
            *count,
            f"""approx AS MATERIALIZED (
                SELECT v.note, v.created, v.embedding::vector({dim}) <=> {vec} AS distance FROM vectors v
                WHERE {over} AND v.space = {space} AND {v_filter}
                ORDER BY v.embedding::vector({dim}) <=> {vec} LIMIT %(depth)s)""",
            f"""exact AS MATERIALIZED (
                SELECT v.note, v.created, 1 - (v.embedding <=> {vec}) AS cosine FROM vectors v
                WHERE ({within} OR (SELECT count(*) FROM approx) < %(depth)s)
                  AND v.space = {space} AND {v_filter}
                ORDER BY cosine DESC, v.created DESC, v.note LIMIT %(depth)s)""",
            """semantic AS (
                SELECT note, created, cosine FROM exact
                UNION ALL
                SELECT note, created, 1 - distance FROM approx WHERE NOT EXISTS (SELECT 1 FROM exact))""",
        ],
        output,
        "SELECT note FROM semantic",
    )


def narrowed(where: NoteFilter) -> bool:
    """Whether ``where`` keeps only part of its project: a group, tags or a time window."""
    return where.group_id is not None or bool(where.tags.values) or where.window != TimeWindow()


def spread_part(space: int, vec: str, v_filter: str, *, narrowed: bool) -> Part:
    """Mean and standard deviation of the query's cosine over a sample of the scope: the
    first ``sample`` vectors in the order of a fixed hash of the note id.

    The whole project (no group, tags or window): one scan of ``vectors_by_sample`` that
    reads each picked row's vector as it goes (about 1,050 buffers for a sample of 1,024).
    A narrowed scope: the picks first, from the index alone (its included columns answer
    the filter without reading the table, however few rows pass), then each picked vector
    through the primary key (4 buffers each): a plain index scan would read the table row
    of every note the filter then rejects."""
    cosine = f"1 - (v.embedding <=> {vec})"
    if not narrowed:
        return Part(
            [
                f"""spread_picks AS MATERIALIZED (
                    SELECT {cosine} AS c FROM vectors v WHERE v.space = {space} AND {v_filter}
                    ORDER BY hashtextextended(v.note, 0), v.note LIMIT %(sample)s)""",
                "spread AS (SELECT count(*) AS n, avg(c) AS mean, stddev_pop(c) AS std FROM spread_picks)",
            ],
            "SELECT 'p', NULL, NULL, mean, std, n, NULL, NULL, NULL FROM spread",
        )
    return Part(
        [
            f"""spread_picks AS MATERIALIZED (
                SELECT v.note FROM vectors v WHERE v.space = {space} AND {v_filter}
                ORDER BY hashtextextended(v.note, 0), v.note LIMIT %(sample)s)""",
            f"""spread AS (
                SELECT count(*) AS n, avg(c) AS mean, stddev_pop(c) AS std FROM (
                    SELECT {cosine} AS c FROM spread_picks x CROSS JOIN LATERAL
                    (SELECT embedding FROM vectors v WHERE v.note = x.note AND v.space = {space} LIMIT 1) v) y)""",
        ],
        "SELECT 'p', NULL, NULL, mean, std, n, NULL, NULL, NULL FROM spread",
    )


def keyword_part() -> Part:
    """The keyword candidates found by the process's BM25 index (``keywords``), already
    filtered and ordered: ``kw_ids`` with their ``kw_scores``, joined to their notes for
    ``created`` (a note deleted since is left out)."""
    return Part(
        [
            """keyword AS MATERIALIZED (
                SELECT u.note, n.created, u.score FROM unnest(%(kw_ids)s::text[], %(kw_scores)s::float8[]) AS u(note, score)
                JOIN notes n ON n.id = u.note)"""
        ],
        "SELECT 'k', note, created, score, NULL, NULL, NULL, NULL, NULL FROM keyword",
        "SELECT note FROM keyword",
    )


def neighbours_sql(where: NoteFilter, *, space: int | None, dim: int, params: dict[str, Any]) -> str:
    """The neighbours of the notes ``seeds`` (in ``params``) that ``where`` selects, as
    ``candidates_sql`` gives those of its candidates (``neighbours_part``, with cosines with
    ``q`` when ``space``), and their docs: rows of kinds ``n`` and ``d``."""
    c_filter, n_filter = filter_sql(where, "c", params), filter_sql(where, "n", params)
    vec = f"%(q)s::vector({int(dim)})"
    near = neighbours_part(["SELECT unnest(%(seeds)s::text[]) AS note"], space, vec, n_filter, c_filter)
    docs = docs_part(["SELECT id AS note FROM neighbours"])
    return f"WITH {', '.join(near.ctes + docs.ctes)} ({near.output}) UNION ALL ({docs.output})"


def neighbours_part(seeds: list[str], space: int | None, vec: str, n_filter: str, c_filter: str = "TRUE") -> Part:
    """For each candidate (each seed that ``c_filter`` keeps) the matching note of its group
    just before and just after it, with its cosine when ``space`` (the semantic part ran) and
    it has a vector there."""
    cosine = "NULL::float8" if space is None else f"1 - (v.embedding <=> {vec})"
    space_join = "" if space is None else f"LEFT JOIN vectors v ON v.note = nb.id AND v.space = {space}"
    return Part(
        [
            f"seeds AS ({' UNION '.join(seeds)})",
            f"""neighbours AS MATERIALIZED (
                SELECT s.note AS seed, nb.id, nb.created, nb.pos FROM seeds s JOIN notes c ON c.id = s.note AND {c_filter}
                CROSS JOIN LATERAL (
                    (SELECT n.id, n.created, 0 AS pos FROM notes n
                     WHERE n.grp = c.grp AND {n_filter} AND (n.created, n.written) < (c.created, c.written)
                     ORDER BY n.created DESC, n.written DESC LIMIT 1)
                    UNION ALL
                    (SELECT n.id, n.created, 1 AS pos FROM notes n
                     WHERE n.grp = c.grp AND {n_filter} AND (n.created, n.written) > (c.created, c.written)
                     ORDER BY n.created, n.written LIMIT 1)
                ) nb)""",
        ],
        f"SELECT 'n', nb.id, nb.created, {cosine}, NULL, nb.pos, nb.seed, NULL, NULL FROM neighbours nb {space_join}",
        "SELECT id FROM neighbours",
    )


def docs_part(named: list[str]) -> Part:
    """The stored fields and home namespace of every note the other parts name."""
    return Part(
        [f"named AS ({' UNION '.join(named)})"],
        "SELECT 'd', x.note, NULL, NULL, NULL, NULL, NULL, n.doc, ns.name FROM named x "
        "CROSS JOIN LATERAL (SELECT doc, home FROM notes n WHERE n.id = x.note LIMIT 1) n "
        "JOIN namespaces ns ON ns.id = n.home",
    )

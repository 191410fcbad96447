"""Hypothesis strategies shared by the property tests."""

from __future__ import annotations

import string

from hypothesis import strategies as st

GROUP_ALPHABET = string.ascii_letters + string.digits + "-_"

group_ids = st.text(alphabet=GROUP_ALPHABET, min_size=1, max_size=40)

not_group_ids = st.text(min_size=0, max_size=20).filter(
    lambda s: s == "" or any(ch not in GROUP_ALPHABET for ch in s)
)

path_segments = st.text(alphabet=string.ascii_letters + string.digits + "-_. ", min_size=1, max_size=12).filter(
    lambda s: s not in (".", "..") and s.strip() == s
)

relative_paths = st.lists(path_segments, min_size=1, max_size=4).map("/".join)

opaque_project_ids = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\x7f"),
    min_size=1,
    max_size=60,
).filter(lambda s: s.strip() == s and not s.startswith(("/", "~", "./", "../")) and s not in (".", ".."))


# -- notes, namespaces and the FAISS store's records -----------------------------------

from datetime import datetime, timezone  # noqa: E402

from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, Namespace, NoteId  # noqa: E402
from local_mcp_memory.domain.note import Note, SyncOrigin, Tags  # noqa: E402

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)

json_objects = st.dictionaries(st.text(max_size=10), json_values, max_size=4)

instants = st.datetimes(
    min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), timezones=st.just(timezone.utc)
)

note_texts = st.text(min_size=1, max_size=200).filter(lambda s: s.strip() != "")

tag_tuples = st.lists(st.text(min_size=1, max_size=20).filter(lambda s: s.strip() != ""), max_size=5, unique=True).map(
    tuple
)

_notes = st.builds(
    Note,
    id=st.uuids(version=4).map(lambda u: NoteId(str(u))),
    project_id=opaque_project_ids.map(CanonicalProjectId),
    group_id=group_ids.map(GroupId),
    text=note_texts,
    created_at=instants,
    title=st.none() | st.text(max_size=50),
    tags=tag_tuples.map(Tags),
    source=st.none() | st.text(max_size=30),
    metadata=st.none() | json_objects,
    expires_at=st.none() | instants,
    origin=st.none() | st.builds(SyncOrigin, root=st.text(min_size=1, max_size=20), path=st.text(min_size=1, max_size=20), digest=st.from_regex(r"[0-9a-f]{64}", fullmatch=True)),
    importance=st.just(0.5) | st.floats(min_value=0, max_value=1),
)
# half of the notes with an expiry have its span recorded, as a request setting it records it
notes = st.tuples(_notes, st.booleans()).map(lambda pair: pair[0].with_expiry(pair[0].expires_at) if pair[1] else pair[0])

namespaces = st.builds(
    Namespace,
    provider=st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True),
    model=st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=20),
    dim=st.integers(min_value=1, max_value=16),
)

# Any JSON value a client can send: integers of any size, every finite float, any text
# (JSON cannot carry a lone surrogate), nesting deep enough to meet the 64-level rule.
any_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=80,
)

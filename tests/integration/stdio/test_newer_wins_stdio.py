"""Knowledge that changes (SPEC §13), through real ``mcp-memory serve`` processes with the
default local model on each real store: the newer fact wins in default search (after a
restart too), the older one still wins in semantic mode, and add_note names the note a new
one likely replaces and nothing for unrelated notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.serve import StdioServer
from tests.postgres_server import postgres, postgres_url  # noqa: F401  (fixtures)

PROJECT = "knowledge-project"
OTHERS = [
    "The marketing site is a separate Next.js repository owned by the growth team.",
    "Invoices are rendered to PDF with WeasyPrint.",
    "Order ids are ULIDs so they sort by creation time.",
    "Feature flags are managed in Unleash; stale flags get removed each quarter.",
    "Rate-limited responses carry a Retry-After header with the number of seconds to wait.",
    "Sessions are stored in Redis and expire after two hours of inactivity.",
]
OLD = "The public API rate limit is 100 requests per minute per API key."
NEW = "We raised the per-key throttle: clients may now send up to 600 calls a minute before getting 429s."
QUESTION = "What is the API rate limit per key?"


@pytest.fixture(params=["faiss", "postgresql"])
def store_args(request: pytest.FixtureRequest) -> tuple[str, ...]:
    if request.param == "postgresql":
        return ("--store", request.getfixturevalue("postgres_url"))
    return ()


def add(server: StdioServer, text: str, when: str | None) -> dict:
    """``when`` None: no createdAt, the server's clock."""
    dated = {} if when is None else {"createdAt": when}
    return server.result("memory.add_note", {"projectId": PROJECT, "groupId": "g", "text": text, **dated})


def ranked(server: StdioServer, mode: str) -> list[str]:
    params = {"projectId": PROJECT, "query": QUESTION, "topK": 5, "mode": mode}
    return [hit["id"] for hit in server.result("memory.search", params)["results"]]


def store_project(server: StdioServer, old: list[str], others: list[str], new: list[str], dated: bool = True) -> list[str]:
    """Old facts (January), the others sorted (March), new facts (June), as the benchmark stores
    them; not ``dated``: in that order, in one sitting (no createdAt, milliseconds apart)."""
    ids = [add(server, text, f"2026-01-12T09:{n:02}:00Z" if dated else None)["id"] for n, text in enumerate(old)]
    for n, text in enumerate(sorted(others)):
        add(server, text, f"2026-03-16T09:{n:02}:00Z" if dated else None)
    return ids + [add(server, text, f"2026-06-15T09:{n:02}:00Z" if dated else None)["id"] for n, text in enumerate(new)]


def ranked_for(server: StdioServer, query: str, mode: str, top_k: int) -> list[str]:
    params = {"projectId": PROJECT, "query": query, "topK": top_k, "mode": mode}
    return [hit["id"] for hit in server.result("memory.search", params)["results"]]


def test_the_newer_fact_wins_in_default_search_and_add_note_names_the_older(tmp_path: Path, store_args: tuple[str, ...]) -> None:
    with StdioServer(tmp_path, *store_args) as server:
        old = add(server, OLD, "2026-01-12T09:00:00Z")
        assert old["possiblySupersedes"] == []
        for n, text in enumerate(OTHERS):
            assert add(server, text, f"2026-03-16T09:0{n}:00Z")["possiblySupersedes"] == []
        new = add(server, NEW, "2026-06-15T09:00:00Z")
        assert new["possiblySupersedes"] == [old["id"]]
        semantic = ranked(server, "semantic")
        assert semantic.index(old["id"]) < semantic.index(new["id"])  # the old wording is closer to the question
    with StdioServer(tmp_path, *store_args) as server:
        hybrid = ranked(server, "hybrid")
        assert hybrid[0] == new["id"] and old["id"] in hybrid


# A fact and its update that share little wording and no change word, only another value of one
# kind (a score for a score): the fraud-scorer project of the knowledge-update set's dev part,
# stored in the benchmark's order (old facts, the others sorted, new facts).
FRAUD_OLD = [
    "The fraud model is a logistic regression on 40 hand-made features.",
    "The decline threshold is a score of 0.8.",
    "The model is retrained every quarter.",
    "Features are computed in a nightly Spark job.",
    "Model precision at the threshold is 0.72.",
    "Sara owns the fraud model.",
]
FRAUD_OTHERS = [
    "Holiday calendars come from the public API of the central bank.",
    "Kafka topics for payments keep seven days of data.",
    "LightGBM training runs on a single 32-core machine in about 40 minutes.",
    "Manual reviewers see the top five feature contributions for each alert.",
    "Notebooks are stored in the analysis repo, not in the service repo.",
    "Our team channel is #risk-eng.",
    "The chargeback model is a separate logistic regression owned by finance.",
]
FRAUD_NEW = [
    "Scoring uses a LightGBM model with 300 trees over 180 features.",
    "Transactions are blocked above 0.65; between 0.5 and 0.65 they go to manual review.",
    "Retraining happens weekly on a rolling six-month window.",
    "Feast serves online features computed from the Kafka stream.",
    "The last evaluation measured precision 0.81 at the operating point.",
    "Ownership of the scorer passed to the risk team under Tomasz.",
]


def test_a_newer_fact_naming_another_value_of_the_same_kind_wins_without_a_change_word(
    tmp_path: Path, store_args: tuple[str, ...]
) -> None:
    with StdioServer(tmp_path, *store_args) as server:
        ids = store_project(server, FRAUD_OLD, FRAUD_OTHERS, FRAUD_NEW)
        old, new = ids[1], ids[len(FRAUD_OLD) + 1]  # "a score of 0.8" -> "blocked above 0.65"
        query = "At what score is a payment declined?"
        semantic, hybrid = ranked_for(server, query, "semantic", 10), ranked_for(server, query, "hybrid", 10)
        assert semantic.index(old) < semantic.index(new)
        assert hybrid.index(new) < hybrid.index(old)


# An update that default search without ``ranking.brought_up`` ranks 13th, far below the old fact
# (first), but that stands out as one of the old fact's nearest notes and names another value of its kind:
# the edge-cluster project of the knowledge-update set's dev part, in the benchmark's order.
CLUSTER_OLD = [
    "Cluster nodes run Ubuntu 20.04.",
    "Ingress is handled by ingress-nginx.",
    "Secrets are kept in a private Git repo encrypted with git-crypt.",
    "Terraform state is stored locally and committed to the repository.",
    "Node autoscaling is disabled; we run a fixed 6 nodes.",
    "The Kubernetes version is 1.24.",
]
CLUSTER_OTHERS = sorted(
    [
        "Traefik dashboards are only reachable through the VPN.",
        "Vault's audit log is shipped to the SIEM.",
        "The CI runners use Ubuntu 22.04 images.",
        "Pod disruption budgets keep two replicas of every API during drains.",
        "Our domain registrar is Gandi.",
        "The on-call handbook explains how to page the database team.",
        "Hardware purchase requests go through the finance portal.",
    ]
)
CLUSTER_NEW = [
    "All nodes were reimaged to Debian 12.",
    "Traefik v3 serves ingress for every namespace.",
    "Secrets come from HashiCorp Vault through the external-secrets operator.",
    "Terraform state lives in an S3 backend with DynamoDB locking.",
    "Cluster Autoscaler adds nodes up to 20 and removes idle ones after 10 minutes.",
    "Control plane and kubelets are on 1.29.",
]


def test_a_best_result_brings_up_its_update_from_below_the_ten_best(tmp_path: Path, store_args: tuple[str, ...]) -> None:
    with StdioServer(tmp_path, *store_args) as server:
        ids = store_project(server, CLUSTER_OLD, CLUSTER_OTHERS, CLUSTER_NEW)
        old, new = ids[0], ids[len(CLUSTER_OLD)]  # "Ubuntu 20.04" -> "Debian 12"
        query = "What operating system do the cluster machines have?"
        semantic = ranked_for(server, query, "semantic", 19)
        assert semantic.index(old) < semantic.index(new)  # the old wording is closer to the question
        hybrid = ranked_for(server, query, "hybrid", 10)
        assert hybrid.index(new) < hybrid.index(old)
        assert ranked_for(server, query, "hybrid", 3) == hybrid[:3]


# Two of the best answers that share nothing but their subject (0.2 standard deviations apart
# from the window's average), each naming a tool: the handbook-site project of the dev part.
HANDBOOK_OLD = [
    "The handbook is built with Jekyll.",
    "The site is hosted on GitHub Pages.",
    "Search uses lunr.js built at compile time.",
    "Pages are written in reStructuredText.",
    "Docs changes need one approval from a maintainer.",
    "The handbook URL is handbook.acme.dev.",
]
HANDBOOK_OTHERS = [
    "The link checker ignores external links to localhost.",
    "Netlify environment variables hold the analytics key.",
    "The API reference is generated separately with TypeDoc.",
    "The blog still uses Jekyll on its own domain.",
    "Screenshots must be taken at 1280x800.",
    "The style guide prefers sentence case in headings.",
    "The company holiday schedule is posted in the HR wiki.",
]
HANDBOOK_NEW = [
    "Docs are generated by Docusaurus 3.",
    "Netlify hosts the handbook and builds previews for every pull request.",
    "Algolia DocSearch powers the search box.",
    "All pages were converted to MDX.",
    "Doc pull requests can be merged by the author after the link checker passes.",
    "The docs moved to docs.acme.dev; the old host redirects.",
]


@pytest.mark.parametrize("dated", [True, False], ids=["months-apart", "one-sitting"])
def test_the_newer_of_two_best_answers_naming_other_tools_wins_though_they_share_little(
    tmp_path: Path, store_args: tuple[str, ...], dated: bool
) -> None:
    """Months apart, or in one sitting: two of the best answers written within the hour pass
    for a fact and its update only when they name different tools of one kind (Jekyll and
    Docusaurus: documentation sites), never for two notes that each name a number."""
    with StdioServer(tmp_path, *store_args) as server:
        ids = store_project(server, HANDBOOK_OLD, HANDBOOK_OTHERS, HANDBOOK_NEW, dated)
        old, new = ids[0], ids[len(HANDBOOK_OLD)]  # Jekyll -> Docusaurus 3
        query = "What static site generator builds the handbook?"
        semantic = ranked_for(server, query, "semantic", 10)
        assert semantic.index(old) < semantic.index(new)
        hybrid = ranked_for(server, query, "hybrid", 10)
        assert hybrid.index(new) < hybrid.index(old)


# An update that names the old value beside the new one, below the ten best in default search
# without the rest of them bringing up, the old fact 9th: the booking-backend project of the dev part.
BOOKING_OLD = [
    "The backend runs on Heroku with two standard-2x dynos.",
    "Passwords are hashed with bcrypt, cost factor 10.",
    "Maximum booking window is 90 days ahead.",
    "The availability endpoint is GET /v1/slots.",
    "Email confirmations are sent through Mailgun.",
    "Cancellations are free until 24 hours before the appointment.",
]
BOOKING_OTHERS = [
    "Azure Front Door terminates TLS and caches the static booking widget.",
    "Admin accounts additionally require a TOTP second factor.",
    "The staging environment still runs a single Heroku hobby dyno for demos.",
    "Reminder emails are scheduled 24 hours before each appointment.",
    "Time zones are stored as IANA names, never as offsets.",
    "The logo SVG lives in assets/brand and must not be recolored.",
    "Customer support answers tickets in Zendesk within one business day.",
]
BOOKING_NEW = [
    "Hosting: Azure App Service, P1v3 plan, three instances behind Front Door.",
    "Credential hashing uses Argon2id (64 MiB memory, 3 iterations); bcrypt hashes get rehashed at next login.",
    "Guests can reserve up to 180 days in advance.",
    "/v1/slots is gone; clients call GET /v2/availability with a date range.",
    "Transactional mail goes out via Amazon SES since the contract renewal fell through.",
    "The free cancellation cut-off is 48 hours; later cancellations cost half the price.",
]


def test_an_update_naming_the_old_value_and_a_new_path_comes_up_from_below_the_ten_best(
    tmp_path: Path, store_args: tuple[str, ...]
) -> None:
    # the scene sits on the rule's bars: with the model's int8 products (the default where the
    # CPU has int8 dot products) the new fact ends 9th, just below the old one (the knowledge
    # set's dev newer-wins is 0.945 with them, 0.950 without: docs/retrieval.md); the float
    # products' scene is the same on every CPU
    with StdioServer(tmp_path, *store_args, env={"MCP_MEMORY_LOCAL_PRODUCTS": "float"}) as server:
        ids = store_project(server, BOOKING_OLD, BOOKING_OTHERS, BOOKING_NEW)
        old, new = ids[3], ids[len(BOOKING_OLD) + 3]  # /v1/slots -> /v2/availability
        query = "Which URL returns free appointment times?"
        semantic = ranked_for(server, query, "semantic", 19)
        assert semantic.index(old) < semantic.index(new)
        hybrid = ranked_for(server, query, "hybrid", 19)
        assert hybrid.index(new) < min(10, hybrid.index(old))  # among the ten best, above the old fact


SMALL_PROJECT = [
    "The API rate limit is 500 requests per minute.",
    "Kubernetes pods have a memory limit of 512 MiB.",
    "Backups are kept for 30 days in a second region.",
    "A full build takes about 12 minutes on the CI runners.",
    "Sessions expire after 2 hours without a request.",
    "Uploads are capped at 25 MB per file.",
]


def test_in_one_sitting_newer_notes_that_each_name_a_number_do_not_slide_the_answer_down(
    tmp_path: Path, store_args: tuple[str, ...]
) -> None:
    """Newer notes of other subjects naming a number each are no updates of the one note asked
    for, however close in time: only rival tools lift the hour between two best answers."""
    with StdioServer(tmp_path, *store_args) as server:
        asked = [add(server, text, None)["id"] for text in SMALL_PROJECT][0]
        assert ranked_for(server, "What is the API rate limit?", "hybrid", 6)[0] == asked

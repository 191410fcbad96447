"""``memory.reembed``: give notes of older namespaces a vector of the current one, at
most ``limit`` per call (``CALL_LIMIT`` when it names none): call again until
``remaining`` is 0."""

from __future__ import annotations

from local_mcp_memory.application import DEFAULT_BATCH
from local_mcp_memory.application.reembed import Reembed, reembed
from local_mcp_memory.application.services import Services
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.method import Method

CALL_LIMIT = 500
"""How many notes one call re-embeds when it names no limit."""


class ReembedParams(wire.Params):
    from_namespace: str | None = None
    batch_size: int | None = None
    limit: int | None = None

    def command(self) -> Reembed:
        return Reembed(
            from_namespace=None if self.from_namespace is None else wire.namespace(self.from_namespace, "from_namespace"),
            batch_size=DEFAULT_BATCH if self.batch_size is None else self.batch_size,
            limit=CALL_LIMIT if self.limit is None else self.limit,
        )


class ReembedResult(wire.View):
    ok: bool
    namespace: str
    reembedded: int
    remaining: int


def run(params: ReembedParams, services: Services) -> ReembedResult:
    done = reembed(params.command(), services)
    return ReembedResult(ok=True, namespace=str(done.namespace), reembedded=done.reembedded, remaining=done.remaining)


METHOD = Method(
    name="memory.reembed",
    params=ReembedParams,
    result=ReembedResult,
    run=run,
    title="Re-embed notes into the current model",
    description=(
        "After the embedder changed (memory_set_config), give notes of older namespaces a vector of the "
        "current one, at most limit notes per call: call again until remaining is 0. Only when the "
        "user asks."
    ),
)

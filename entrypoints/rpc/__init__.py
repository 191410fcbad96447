"""JSON-RPC 2.0 for every transport: the dispatcher (``dispatcher``), the error codes and
the mapping of every failure to one (``errors``), the nesting bound checked before decoding
(``nesting``), and the stdio transport (``stdio``). It knows no method: the tables of
routes it serves are built by ``entrypoints.methods`` and ``entrypoints.mcp``."""

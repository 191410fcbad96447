"""The revisions of the Model Context Protocol this server speaks, oldest first.

Shared by the MCP methods (``initialize`` negotiates one) and the Streamable HTTP transport
(which checks the ``MCP-Protocol-Version`` header), so neither imports the other.
"""

PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[-1]

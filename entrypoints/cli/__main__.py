"""``python -m local_mcp_memory.entrypoints.cli``: the ``mcp-memory`` command (the hook
service is started this way)."""

import sys

from local_mcp_memory.entrypoints.cli.main import main

sys.exit(main())

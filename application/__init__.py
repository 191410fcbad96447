"""Use cases of the memory server, one module per method, written against ports only."""

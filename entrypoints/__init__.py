"""Entrypoints: the CLI, the JSON-RPC dispatcher, the stdio and HTTP transports, the composition root."""

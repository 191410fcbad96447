"""Where mcp-memory keeps its files, resolved with the standard library alone: hooks resolve
them on every prompt and cannot wait for the rest of the application to import."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

CONFIG_ENV = "MCP_MEMORY_CONFIG"
DATA_DIR_ENV = "MCP_MEMORY_DATA_DIR"
STORE_ENV = "MCP_MEMORY_STORE"
HOME_DIR = ".local-mcp-memory"


def resolve_paths(
    environ: Mapping[str, str], config_path: str | Path | None = None, data_dir: str | Path | None = None, store: str | None = None
) -> tuple[Path, Path, str | None]:
    """``(config path, data directory, store setting)``: flags win over the environment, which
    wins over ``~/.local-mcp-memory``."""
    home = Path(os.path.expanduser("~")) / HOME_DIR
    config = config_path or environ.get(CONFIG_ENV) or home / "config.json"
    data = data_dir or environ.get(DATA_DIR_ENV) or home / "data"
    return (
        Path(os.path.expanduser(str(config))).absolute(),
        Path(os.path.expanduser(str(data))).absolute(),
        store or environ.get(STORE_ENV) or None,
    )

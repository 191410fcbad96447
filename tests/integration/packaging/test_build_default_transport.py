"""Packagers bake the default transport into a wheel with an environment variable."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def build_wheel(out: Path, transport: str | None) -> Path:
    env = {k: v for k, v in os.environ.items() if k != "MCP_MEMORY_DEFAULT_TRANSPORT"}
    if transport:
        env["MCP_MEMORY_DEFAULT_TRANSPORT"] = transport
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(REPO)],
        check=True,
        env=env,
        capture_output=True,
    )
    (wheel,) = out.glob("local_mcp_memory-*.whl")
    return wheel


def get_config_from(wheel: Path, tmp_path: Path) -> dict:
    """Run the wheel's own code (not the editable checkout) and ask it for its config."""
    target = tmp_path / "installed"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    dependencies = site.getsitepackages()
    script = (
        "import sys; sys.path[:0] = %r; from local_mcp_memory.entrypoints.cli import main; "
        "sys.exit(main(['serve', '--transport', 'stdio']))" % ([str(target), *dependencies],)
    )
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "MCP_MEMORY_CONFIG": str(tmp_path / "config.json"),
        "MCP_MEMORY_DATA_DIR": str(tmp_path / "data"),
    }
    request = b'{"jsonrpc":"2.0","id":1,"method":"memory.get_config"}\n'
    done = subprocess.run(
        [sys.executable, "-S", "-c", script], input=request, capture_output=True, env=env, timeout=60, check=True
    )
    return json.loads(done.stdout)["result"]


def test_a_wheel_built_with_http_reports_http(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path / "dist", "http")
    config = get_config_from(wheel, tmp_path)
    assert config["transportDefaults"]["defaultTransport"] == "http"


def test_a_plain_wheel_defaults_to_stdio(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path / "dist", None)
    assert get_config_from(wheel, tmp_path)["transportDefaults"]["defaultTransport"] == "stdio"


def test_an_unknown_transport_fails_the_build(tmp_path: Path) -> None:
    env = {**os.environ, "MCP_MEMORY_DEFAULT_TRANSPORT": "carrier-pigeon"}
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path), str(REPO)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert "MCP_MEMORY_DEFAULT_TRANSPORT must be one of" in done.stdout + done.stderr


def test_the_wheel_adds_one_package_and_ships_no_test_fakes(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path / "dist", None)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    top = {name.split("/", 1)[0] for name in names}
    assert {name for name in top if not name.endswith(".dist-info")} == {"local_mcp_memory"}
    assert "local_mcp_memory/entrypoints/build_defaults.py" in names
    assert not [name for name in names if "memory_store.py" in name or "hashing" in name or "manual_clock" in name]

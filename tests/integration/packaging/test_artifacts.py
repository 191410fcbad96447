"""What a user installs is what works: the wheel and the sdist built as a user's installer
builds them, checked file by file against the checkout, installed (never editable) into fresh
virtualenvs, by pip, pipx and uv, and run in the default configuration: the local model over
stdio, the dashboard and ``/rpc`` over HTTP, ``verify``; and the wheel with the oldest release
of each dependency that pyproject.toml allows.

Every other test of the suite runs the package that ``scripts/test`` installed from the wheel
(``test_the_suite_runs_the_installed_wheel``), so a file missing from the package fails wherever
the server reads it; this module adds what only a fresh install shows.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import tomllib
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from local_mcp_memory.entrypoints.version import VERSION
from tests.integration.http_server import HttpServer, rpc
from tests.integration.serve import StdioServer, server_env

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]
LAYERS = ("domain", "application", "adapters", "entrypoints")
PACKAGE = "local_mcp_memory"
BIN = Path(sys.executable).parent


def run(*command: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 900) -> str:
    done = subprocess.run([str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{command} exited {done.returncode}\nstdout: {done.stdout[-3000:]}\nstderr: {done.stderr[-3000:]}"
    return done.stdout


def tracked_package_files() -> set[str]:
    listed = run("git", "ls-files", "-z", *LAYERS, cwd=REPO).split("\0")
    return {f"{PACKAGE}/{name}" for name in listed if name}


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist and the wheel, built by ``python -m build`` in an isolated environment: the
    wheel is built from the unpacked sdist, so both carry only what the sdist rules ship."""
    out = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "build", "--outdir", out, REPO)
    (wheel,) = out.glob("local_mcp_memory-*.whl")
    (sdist,) = out.glob("local_mcp_memory-*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


def test_the_wheel_carries_every_file_of_the_package_folders_and_nothing_else(artifacts: dict[str, Path]) -> None:
    with zipfile.ZipFile(artifacts["wheel"]) as archive:
        shipped = {name for name in archive.namelist() if ".dist-info/" not in name}
    expected = tracked_package_files()
    assert expected - shipped == set(), "files the package reads are missing from the wheel"
    assert shipped - expected == set(), "the wheel carries files the checkout does not track"
    assert f"{PACKAGE}/adapters/embedders/minilm/tokenizer.json" in shipped


def test_the_wheel_carries_the_licence_and_the_tokenizer_notice(artifacts: dict[str, Path]) -> None:
    with zipfile.ZipFile(artifacts["wheel"]) as archive:
        names = archive.namelist()
        metadata = next(archive.read(name).decode() for name in names if name.endswith(".dist-info/METADATA"))
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert any(name.endswith("minilm/NOTICE") and ".dist-info/licenses/" in name for name in names)
    assert "License-Expression: Apache-2.0" in metadata
    assert f"Version: {VERSION}" in metadata
    assert "Requires-Python: >=3.11" in metadata
    assert "Classifier: Programming Language :: Python :: 3.11" in metadata
    assert "Project-URL: " in metadata
    assert "Description-Content-Type: text/markdown" in metadata


def test_the_sdist_carries_the_package_folders_the_build_files_and_the_licence(artifacts: dict[str, Path]) -> None:
    with tarfile.open(artifacts["sdist"]) as archive:
        top, *_ = archive.getnames()
        names = {name.removeprefix(f"{top}/") for name in archive.getnames()}
    expected = {name.removeprefix(f"{PACKAGE}/") for name in tracked_package_files()}
    assert expected - names == set()
    assert {"LICENSE", "README.md", "pyproject.toml", "setup.py", "MANIFEST.in", "PKG-INFO"} <= names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]


def test_a_wheel_built_in_a_reused_checkout_never_ships_a_deleted_module(tmp_path: Path) -> None:
    """pip, pipx and uv build a checkout in place, in its ``build/`` folder: what an earlier build
    left there (a module deleted since) must not reach the new wheel."""
    checkout = tmp_path / "checkout"
    for name in run("git", "ls-files", "-z", cwd=REPO).split("\0"):
        if name and (REPO / name).is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            (checkout / name).write_bytes((REPO / name).read_bytes())
    stale = checkout / "build" / "lib" / PACKAGE / "adapters" / "deleted_since.py"
    stale.parent.mkdir(parents=True)
    stale.write_text("LEFT = 'by an earlier build'\n")
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", tmp_path / "out", checkout)
    (wheel,) = (tmp_path / "out").glob("local_mcp_memory-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert f"{PACKAGE}/adapters/deleted_since.py" not in archive.namelist()
        assert f"{PACKAGE}/adapters/embedders/minilm/tokenizer.json" in archive.namelist()


def test_both_artifacts_pass_twine_check(artifacts: dict[str, Path]) -> None:
    output = run(sys.executable, "-m", "twine", "check", "--strict", artifacts["wheel"], artifacts["sdist"])
    assert output.count("PASSED") == 2


def dependencies() -> list[str]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]


@pytest.fixture(scope="module", params=["wheel", "sdist", "oldest"])
def installed(request: pytest.FixtureRequest, artifacts: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with one artifact installed by pip, not editable: its ``bin`` folder.
    ``oldest``: the wheel with the oldest release of each dependency that pyproject.toml allows
    (uv's lowest resolution of the direct dependencies), which a user's existing environment
    may well hold."""
    home = tmp_path_factory.mktemp(f"venv-{request.param}")
    venv.create(home, with_pip=True)
    python = home / "bin" / "python"
    if request.param == "oldest":
        run(BIN / "uv", "pip", "install", "--quiet", "--python", python, "--resolution", "lowest-direct",
            "--only-binary", ":all:", artifacts["wheel"], *dependencies(), cwd=home)
    else:
        run(python, "-m", "pip", "install", "--quiet", artifacts[request.param], cwd=home)
    return home / "bin"


@pytest.mark.parametrize("installed", ["oldest"], indirect=True)
def test_the_oldest_dependencies_installed_are_the_lower_bounds_pyproject_names(installed: Path) -> None:
    """Each lower bound is a release that installs here (a wheel) and that the tests below run."""
    found = {
        entry["name"].lower(): entry["version"]
        for entry in json.loads(run(installed / "python", "-m", "pip", "list", "--format", "json"))
    }
    for dependency in map(Requirement, dependencies()):
        (bound,) = [spec.version for spec in dependency.specifier if spec.operator in (">=", "==")]
        assert Version(found[dependency.name.lower()]) == Version(bound), dependency


def assert_default_configuration_works(program: Path, home: Path) -> None:
    """The first thing a user does: add a note and find it by meaning, local model, no key."""
    with StdioServer(home, program=str(program)) as server:
        added = server.result("memory.add_note", {"projectId": "demo", "groupId": "feature-1", "text": "The deploy runs on Fridays after the freeze."})
        assert added["namespace"] == "local:all-MiniLM-L6-v2:384"
        found = server.result("memory.search", {"projectId": "demo", "query": "when do we ship releases?"})
        assert [hit["id"] for hit in found["results"]] == [added["id"]]
    assert run(program, "--version").strip() == f"mcp-memory {VERSION}"


def test_the_installed_artifact_serves_stdio_with_the_local_model(installed: Path, tmp_path: Path) -> None:
    where = run(installed / "python", "-c", f"import {PACKAGE}.adapters.embedders.local as m; print(m.__file__)", cwd=tmp_path)
    assert where.startswith(str(installed.parent)), f"the package came from {where}, not the fresh virtualenv"
    assert_default_configuration_works(installed / "mcp-memory", tmp_path / "home")


def test_the_installed_artifact_serves_the_dashboard_and_rpc_over_http(installed: Path, tmp_path: Path) -> None:
    with HttpServer(tmp_path / "home", program=str(installed / "mcp-memory")) as server, server.client() as client:
        page = client.get("/")
        assert page.status_code == 200 and page.text.startswith("<!doctype html>")
        assets = set(re.findall(r'(?:src|href)="(/assets/[^"]+)"', page.text))
        assert "/assets/main.js" in assets
        for asset in assets:
            assert client.get(asset).status_code == 200, asset
        added = client.post("/rpc", json=rpc("memory.add_note", {"projectId": "demo", "groupId": "g", "text": "Caches expire after ten minutes."})).json()
        assert "result" in added, added
        found = client.post("/rpc", json=rpc("memory.search", {"projectId": "demo", "query": "how long is cached data kept?"})).json()
        assert [hit["id"] for hit in found["result"]["results"]] == [added["result"]["id"]]


def test_the_installed_artifact_verifies_a_store_it_wrote(installed: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert_default_configuration_works(installed / "mcp-memory", home)
    report = run(installed / "mcp-memory", "verify", env=server_env(home), cwd=home)
    assert "1 note" in report or "notes: 1" in report or "1 notes" in report, report


@pytest.fixture(scope="module")
def tool_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    base = tmp_path_factory.mktemp("tools")
    yield {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PIPX_", "UV_", "VIRTUAL_ENV"))},
        "PIPX_HOME": str(base / "pipx"),
        "PIPX_BIN_DIR": str(base / "pipx-bin"),
        "PIPX_MAN_DIR": str(base / "pipx-man"),
        "UV_TOOL_DIR": str(base / "uv-tools"),
        "UV_TOOL_BIN_DIR": str(base / "uv-bin"),
        "UV_PYTHON_DOWNLOADS": "never",
    }


@pytest.mark.parametrize("source", ["wheel", "checkout"])
def test_pipx_install_gives_a_working_command(source: str, artifacts: dict[str, Path], tool_dirs: dict[str, str], tmp_path: Path) -> None:
    target = artifacts["wheel"] if source == "wheel" else REPO
    run(BIN / "pipx", "install", "--force", "--python", sys.executable, target, env=tool_dirs, cwd=tmp_path)
    assert_default_configuration_works(Path(tool_dirs["PIPX_BIN_DIR"]) / "mcp-memory", tmp_path / "home")
    run(BIN / "pipx", "uninstall", "local-mcp-memory", env=tool_dirs, cwd=tmp_path)


@pytest.mark.parametrize("source", ["wheel", "checkout"])
def test_uv_tool_install_gives_a_working_command(source: str, artifacts: dict[str, Path], tool_dirs: dict[str, str], tmp_path: Path) -> None:
    target = artifacts["wheel"] if source == "wheel" else REPO
    run(BIN / "uv", "tool", "install", "--force", "--python", sys.executable, target, env=tool_dirs, cwd=tmp_path)
    assert_default_configuration_works(Path(tool_dirs["UV_TOOL_BIN_DIR"]) / "mcp-memory", tmp_path / "home")
    run(BIN / "uv", "tool", "uninstall", "local-mcp-memory", env=tool_dirs, cwd=tmp_path)


def test_uvx_runs_the_server_from_the_wheel(artifacts: dict[str, Path], tool_dirs: dict[str, str], tmp_path: Path) -> None:
    uvx = [str(BIN / "uv"), "tool", "run", "--python", sys.executable, "--from", str(artifacts["wheel"]), "mcp-memory"]
    assert run(*uvx, "--version", env=tool_dirs, cwd=tmp_path).strip() == f"mcp-memory {VERSION}"
    home = tmp_path / "home"
    home.mkdir()
    process = subprocess.run(
        [*uvx, "serve"],
        input=json.dumps(rpc("memory.add_note", {"projectId": "demo", "groupId": "g", "text": "uvx starts the server."})) + "\n",
        env={**server_env(home), **{k: v for k, v in tool_dirs.items() if k.startswith("UV_")}},
        capture_output=True,
        text=True,
        timeout=600,
        cwd=home,
    )
    assert process.returncode == 0, process.stderr[-2000:]
    (line,) = process.stdout.splitlines()
    assert json.loads(line)["result"]["namespace"] == "local:all-MiniLM-L6-v2:384"


def test_the_suite_runs_the_installed_wheel() -> None:
    """scripts/test installs the wheel it built, not the checkout: every client test then runs
    what a user installs. A plain ``pytest`` in an editable install says so instead of passing."""
    import local_mcp_memory.adapters.embedders.local as module

    if os.environ.get("MCP_MEMORY_TEST_FROM_WHEEL") != "1":
        pytest.fail("run the suite through scripts/test, which installs the built wheel (MCP_MEMORY_TEST_FROM_WHEEL=1)")
    assert "site-packages" in Path(module.__file__).parts, f"the package under test is the checkout: {module.__file__}"
    assert (Path(module.__file__).parent / "minilm" / "tokenizer.json").is_file()

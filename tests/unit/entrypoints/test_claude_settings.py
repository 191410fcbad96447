"""install-claude's merge into Claude Code's settings file (entrypoints/claude_settings.py):
other settings and hooks kept, idempotent, an unreadable file reported and left alone."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from local_mcp_memory.entrypoints.claude_settings import (
    MATCHER,
    SettingsUnreadable,
    hook_command,
    install,
    is_ours,
    project_settings,
    user_settings,
)

COMMAND = hook_command("mcp-memory")
OURS = {"type": "command", "command": COMMAND, "timeout": 30}


def settings_file(tmp_path: Path, content: object | str | None = None) -> Path:
    path = project_settings(str(tmp_path))
    if content is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_a_missing_file_gets_exactly_the_session_start_hook(tmp_path: Path) -> None:
    path = settings_file(tmp_path)
    assert install(path, COMMAND) is True
    assert json.loads(path.read_text()) == {"hooks": {"SessionStart": [{"matcher": MATCHER, "hooks": [OURS]}]}}


def test_the_hook_runs_mcp_memory_context_for_the_sessions_project() -> None:
    assert shlex.split(COMMAND) == ["mcp-memory", "context", "--project", "${CLAUDE_PROJECT_DIR:-$PWD}"]
    assert MATCHER == "startup|clear|compact"


def test_config_and_data_dir_are_passed_on_absolute_and_quoted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    command = hook_command("/opt/my tools/mcp-memory", "conf.json", "my data")
    assert shlex.split(command)[4:] == ["--config", str(tmp_path / "conf.json"), "--data-dir", str(tmp_path / "my data")]
    assert shlex.split(command)[0] == "/opt/my tools/mcp-memory"


def test_every_other_setting_event_group_and_hook_is_kept_in_order(tmp_path: Path) -> None:
    before = {
        "model": "opus",
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}],
            "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}],
        },
        "env": {"A": "1"},
    }
    path = settings_file(tmp_path, before)
    install(path, COMMAND)
    after = json.loads(path.read_text())
    assert list(after) == ["model", "permissions", "hooks", "env"]
    assert {k: v for k, v in after.items() if k != "hooks"} == {k: v for k, v in before.items() if k != "hooks"}
    assert after["hooks"]["PreToolUse"] == before["hooks"]["PreToolUse"]
    assert after["hooks"]["SessionStart"] == [before["hooks"]["SessionStart"][0], {"matcher": MATCHER, "hooks": [OURS]}]


def test_installing_twice_writes_nothing_the_second_time(tmp_path: Path) -> None:
    path = settings_file(tmp_path, {"theme": "dark"})
    assert install(path, COMMAND) is True
    written = path.read_bytes()
    stamp = path.stat().st_mtime_ns
    assert install(path, COMMAND) is False
    assert path.read_bytes() == written and path.stat().st_mtime_ns == stamp


def test_an_older_hook_of_ours_is_replaced_not_doubled(tmp_path: Path) -> None:
    old = {"type": "command", "command": "/old/venv/bin/mcp-memory context --project /x"}
    path = settings_file(tmp_path, {"hooks": {"SessionStart": [
        {"matcher": "startup", "hooks": [old, {"type": "command", "command": "echo kept"}]},
        {"hooks": [old]},
    ]}})  # fmt: skip
    install(path, COMMAND)
    groups = json.loads(path.read_text())["hooks"]["SessionStart"]
    assert groups == [
        {"matcher": "startup", "hooks": [{"type": "command", "command": "echo kept"}]},
        {"matcher": MATCHER, "hooks": [OURS]},
    ]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"hooks": {"SessionStart": [', "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"hooks": []}', '"hooks" is not a JSON object'),
        ('{"hooks": {"SessionStart": {"matcher": ""}}}', '"hooks.SessionStart" is not a list'),
        ('{"hooks": {"SessionStart": [{"hooks": "echo"}]}}', '"hooks.SessionStart" is not a list'),
        (b"\xff\xfe{}", "not UTF-8"),
    ],
)
def test_a_file_claude_code_could_not_read_is_reported_and_left_as_it_was(
    tmp_path: Path, content: str | bytes, reason: str
) -> None:
    path = settings_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(SettingsUnreadable) as refused:
        install(path, COMMAND)
    assert reason in str(refused.value) and str(path) in str(refused.value)
    assert path.read_bytes() == (content if isinstance(content, bytes) else content.encode())
    assert os.listdir(path.parent) == ["settings.json"]  # no temporary file left behind


@pytest.mark.parametrize("content", ["", "  \n", "\ufeff{}"])
def test_an_empty_file_or_one_with_a_byte_order_mark_is_read_as_settings(tmp_path: Path, content: str) -> None:
    path = settings_file(tmp_path, content)
    assert install(path, COMMAND) is True
    assert json.loads(path.read_text())["hooks"]["SessionStart"][0]["hooks"] == [OURS]


def test_the_files_permissions_are_kept(tmp_path: Path) -> None:
    path = settings_file(tmp_path, {"a": 1})
    path.chmod(0o600)
    install(path, COMMAND)
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_symlinked_settings_file_is_written_through_the_link(tmp_path: Path) -> None:
    dotfile = tmp_path / "dotfiles" / "claude.json"
    dotfile.parent.mkdir()
    dotfile.write_text('{"theme": "dark"}')
    path = settings_file(tmp_path / "project")
    path.parent.mkdir(parents=True)
    path.symlink_to(dotfile)
    install(path, COMMAND)
    assert path.is_symlink()
    assert json.loads(dotfile.read_text())["theme"] == "dark" and "hooks" in json.loads(dotfile.read_text())


def test_user_settings_follow_claude_config_dir_else_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert user_settings({"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}) == tmp_path / "cfg" / "settings.json"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert user_settings({}) == tmp_path / ".claude" / "settings.json"


@pytest.mark.parametrize(
    ("hook", "ours"),
    [
        ({"type": "command", "command": "mcp-memory context"}, True),
        ({"type": "command", "command": "'/a b/mcp-memory' context --project x"}, True),
        ({"type": "command", "command": "mcp-memory serve"}, False),
        ({"type": "command", "command": "echo mcp-memory context"}, False),
        ({"type": "command", "command": "unbalanced 'quote"}, False),
        ({"type": "command"}, False),
        ("mcp-memory context", False),
    ],
)
def test_only_a_command_running_mcp_memory_context_counts_as_ours(hook: object, ours: bool) -> None:
    assert is_ours(hook) is ours

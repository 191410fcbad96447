"""install-claude / uninstall-claude on Claude Code's settings files
(entrypoints/cli/claude_settings.py): every hook and the MCP server, owned by an exact marker,
strict JSON with numbers kept as written, idempotent, refusing what it cannot change safely."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from local_mcp_memory.entrypoints.cli.claude_settings import (
    HOOKS,
    MARKER,
    SERVER_NAME,
    SettingsUnreadable,
    apply,
    hook_command,
    is_our_hook,
    paths_env,
    project_servers,
    project_settings,
    server_entry,
    user_servers,
    user_settings,
    with_hooks,
    with_server,
    without_hooks,
    without_server,
)

COMMANDS = {spec.event: hook_command("mcp-memory", spec, {}) for spec in HOOKS}
ENTRY = server_entry("mcp-memory", {})


def install(project: Path) -> list[Path]:
    return apply([
        (project_settings(project), lambda s, p: with_hooks(s, COMMANDS, p)),
        (project_servers(project), lambda c, p: with_server(c, ENTRY, p)[0]),
    ])  # fmt: skip


def uninstall(project: Path) -> list[Path]:
    return apply([(project_settings(project), without_hooks), (project_servers(project), without_server)])


def write(path: Path, content: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else (content if isinstance(content, str) else json.dumps(content)).encode())
    return path


def ours(event: str) -> dict[str, Any]:
    return next(spec for spec in HOOKS if spec.event == event).group(COMMANDS[event])


def test_a_project_without_settings_gets_every_hook_and_the_server(tmp_path: Path) -> None:
    assert install(tmp_path) == [project_settings(tmp_path), project_servers(tmp_path)]
    hooks = json.loads(project_settings(tmp_path).read_text())["hooks"]
    assert list(hooks) == ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd", "PreCompact"]
    assert hooks["SessionStart"] == [{"matcher": "startup|resume|clear|compact", "hooks": [
        {"type": "command", "command": "mcp-memory hook session-start " + MARKER, "timeout": 30}]}]  # fmt: skip
    assert hooks["UserPromptSubmit"] == [{"hooks": [{"type": "command", "command": "mcp-memory hook user-prompt-submit " + MARKER, "timeout": 10}]}]
    servers = json.loads(project_servers(tmp_path).read_text())["mcpServers"]
    assert servers == {SERVER_NAME: {"type": "stdio", "command": "mcp-memory", "args": ["serve"], "env": {"MCP_MEMORY_INSTALLED_BY": "install-claude"}}}


def test_the_hook_commands_run_mcp_memory_hook_with_the_marker_as_a_shell_comment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = paths_env("conf.json", "my data")
    command = hook_command("/opt/my tools/mcp-memory", HOOKS[2], env)
    assert shlex.split(command, comments=True) == [
        f"MCP_MEMORY_CONFIG={tmp_path / 'conf.json'}", f"MCP_MEMORY_DATA_DIR={tmp_path / 'my data'}", "/opt/my tools/mcp-memory", "hook", "stop",
    ]  # fmt: skip
    assert command.endswith(" " + MARKER)
    assert server_entry("mcp-memory", env)["env"] == {**env, "MCP_MEMORY_INSTALLED_BY": "install-claude"}


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
    path = write(project_settings(tmp_path), before)
    install(tmp_path)
    after = json.loads(path.read_text())
    assert list(after) == ["model", "permissions", "hooks", "env"]
    assert {k: v for k, v in after.items() if k != "hooks"} == {k: v for k, v in before.items() if k != "hooks"}
    assert after["hooks"]["PreToolUse"] == before["hooks"]["PreToolUse"]
    assert after["hooks"]["SessionStart"] == [before["hooks"]["SessionStart"][0], ours("SessionStart")]
    uninstall(tmp_path)
    assert json.loads(path.read_text()) == before


def test_installing_or_uninstalling_twice_writes_nothing_the_second_time(tmp_path: Path) -> None:
    write(project_settings(tmp_path), {"theme": "dark"})
    assert install(tmp_path)
    written = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (project_settings(tmp_path), project_servers(tmp_path))}
    assert install(tmp_path) == []
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in written} == written
    assert uninstall(tmp_path) == list(written)
    assert json.loads(project_settings(tmp_path).read_text()) == {"theme": "dark"}
    assert not project_servers(tmp_path).exists()
    stamp = project_settings(tmp_path).stat().st_mtime_ns
    assert uninstall(tmp_path) == [] and project_settings(tmp_path).stat().st_mtime_ns == stamp


def test_uninstall_deletes_a_file_left_holding_nothing_and_keeps_one_with_anything_else(tmp_path: Path) -> None:
    install(tmp_path)
    assert uninstall(tmp_path) == [project_settings(tmp_path), project_servers(tmp_path)]
    assert not project_settings(tmp_path).exists() and not project_servers(tmp_path).exists()
    write(project_settings(tmp_path), {"hooks": {}})  # an empty hooks object left by our removal goes too
    write(project_servers(tmp_path), {"mcpServers": {"other": {"command": "x"}}})
    install(tmp_path)
    uninstall(tmp_path)
    assert not project_settings(tmp_path).exists()
    assert json.loads(project_servers(tmp_path).read_text()) == {"mcpServers": {"other": {"command": "x"}}}
    kept = write(project_settings(tmp_path), {"hooks": {"Notification": []}})  # the user's own empty event
    install(tmp_path)
    uninstall(tmp_path)
    assert json.loads(kept.read_text()) == {"hooks": {"Notification": []}}


def test_a_users_own_hooks_running_mcp_memory_are_neither_changed_nor_removed(tmp_path: Path) -> None:
    mine = [
        {"type": "command", "command": "mcp-memory context --project \"${CLAUDE_PROJECT_DIR:-$PWD}\"", "timeout": 30},
        {"type": "command", "command": "mcp-memory hook stop"},
        {"type": "command", "command": "mcp-memory hook stop # mcp-memory install-claude, by hand"},
    ]
    before = {"hooks": {"SessionStart": [{"matcher": "startup|clear|compact", "hooks": mine[:1]}], "Stop": [{"hooks": mine[1:]}]}}
    path = write(project_settings(tmp_path), before)
    install(tmp_path)
    after = json.loads(path.read_text())["hooks"]
    assert after["SessionStart"] == [before["hooks"]["SessionStart"][0], ours("SessionStart")]
    assert after["Stop"] == [before["hooks"]["Stop"][0], ours("Stop")]
    uninstall(tmp_path)
    assert json.loads(path.read_text()) == before
    assert [is_our_hook(h) for h in mine] == [False, False, False]


def test_an_older_hook_of_ours_is_replaced_not_doubled(tmp_path: Path) -> None:
    old = {"type": "command", "command": "/old/venv/bin/mcp-memory hook stop " + MARKER, "timeout": 5}
    path = write(project_settings(tmp_path), {"hooks": {"Stop": [
        {"matcher": "", "hooks": [old, {"type": "command", "command": "echo kept"}]},
        {"hooks": [old]},
    ]}})  # fmt: skip
    install(tmp_path)
    assert json.loads(path.read_text())["hooks"]["Stop"] == [{"matcher": "", "hooks": [{"type": "command", "command": "echo kept"}]}, ours("Stop")]


def test_a_server_of_the_users_named_mcp_memory_is_left_alone(tmp_path: Path) -> None:
    theirs = {"mcpServers": {SERVER_NAME: {"command": "/opt/mm/bin/mcp-memory", "args": ["serve", "--transport", "stdio"]}, "other": {"command": "x"}}}
    path = write(project_servers(tmp_path), theirs)
    changed, note = with_server(json.loads(path.read_text()), ENTRY, path)
    assert changed is None and note is not None and "did not write" in note
    install(tmp_path)
    uninstall(tmp_path)
    assert json.loads(path.read_text()) == theirs


def test_numbers_are_kept_as_written(tmp_path: Path) -> None:
    text = '{"a": 1e400, "b": -0.0, "c": 12345678901234567890123, "d": 1.10, "e": [1E+2, 0.1e-5]}'
    path = write(project_settings(tmp_path), text)
    install(tmp_path)
    installed = path.read_text()
    for literal in ("1e400", "-0.0", "12345678901234567890123", "1.10", "1E+2", "0.1e-5"):
        assert literal in installed
    assert "Infinity" not in installed
    uninstall(tmp_path)
    assert json.loads(path.read_text(), parse_float=str, parse_int=str) == json.loads(text, parse_float=str, parse_int=str)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"hooks": {"SessionStart": [', "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"a": NaN}', "holds NaN"),
        ('{"a": [Infinity]}', "holds Infinity"),
        ('{"a": -Infinity}', "holds -Infinity"),
        ('{"a": 1, "a": 2}', "the key 'a' appears twice"),
        ('{"hooks": []}', '"hooks" is not a JSON object'),
        ('{"hooks": {"SessionStart": {"matcher": ""}}}', '"hooks.SessionStart" is not a list'),
        ('{"hooks": {"Notification": [{"hooks": "echo"}]}}', '"hooks.Notification[0].hooks" is not a list'),
        ('{"hooks": {"Stop": [5]}}', '"hooks.Stop[0]" is not a JSON object'),
        ('{"hooks": {"Stop": [{"matcher": 5, "hooks": []}]}}', '"hooks.Stop[0].matcher" is not a string'),
        ('{"hooks": {"Stop": [{"matcher": null, "hooks": []}]}}', '"hooks.Stop[0].matcher" is not a string'),
        ('{"hooks": {"Stop": [{"matcher": "x"}]}}', '"hooks.Stop[0].hooks" is not a list'),
        ('{"hooks": {"Stop": [{"hooks": [5]}]}}', '"hooks.Stop[0].hooks[0]" is not a JSON object'),
        ('{"hooks": {"Stop": [{"hooks": [{"command": "echo"}]}]}}', '"hooks.Stop[0].hooks[0].type" is not a string'),
        ('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": 5}]}]}}', '"hooks.Stop[0].hooks[0].command" is not a string'),
        ('{"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}', '"hooks.Stop[0].hooks[0].command" is not a string'),
        ('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": "5"}]}]}}', '"hooks.Stop[0].hooks[0].timeout" is not a positive number'),
        ('{"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://x", "timeout": 0}]}]}}', '"hooks.Stop[0].hooks[0].timeout" is not a positive number'),
        ('{"mcpServers": []}', '"mcpServers" is not a JSON object'),
        (b"\xff\xfe{}", "not UTF-8"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"a": ' + "[" * 980 + "]" * 980 + "}", "nested too deeply"),
    ],
)
@pytest.mark.parametrize("where", [project_settings, project_servers])
def test_a_file_that_cannot_be_read_strictly_is_reported_and_nothing_is_written_anywhere(
    tmp_path: Path, content: str | bytes, reason: str, where: Any
) -> None:
    path = write(where(tmp_path), content)
    for change in (install, uninstall):
        if reason.startswith('"mcpServers"') and where is project_settings or reason.startswith('"hooks') and where is project_servers:
            continue  # that member means nothing in that file
        with pytest.raises(SettingsUnreadable) as refused:
            change(tmp_path)
        assert reason in str(refused.value) and str(path) in str(refused.value)
        assert path.read_bytes() == (content if isinstance(content, bytes) else content.encode())
        other = project_servers(tmp_path) if where is project_settings else project_settings(tmp_path)
        assert not other.exists()
        assert os.listdir(path.parent) == [path.name]  # no temporary file left behind


def test_hook_entries_of_every_shape_claude_code_reads_are_kept(tmp_path: Path) -> None:
    theirs = {"hooks": {
        "PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 1.5, "async": True}], "note": "mine"}],
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "Done?"}, {"type": "http", "url": "http://127.0.0.1:9/"}]}, {"hooks": []}],
        "SomeFutureEvent": [{"hooks": [{"type": "some-future-type", "anything": [1]}]}],
    }}  # fmt: skip
    path = write(project_settings(tmp_path), theirs)
    install(tmp_path)
    assert json.loads(path.read_text())["hooks"]["Stop"] == [*theirs["hooks"]["Stop"], ours("Stop")]
    uninstall(tmp_path)
    assert json.loads(path.read_text()) == theirs


def test_a_settings_path_that_is_no_regular_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    path = project_settings(tmp_path)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)  # reading it would wait for a writer forever
    with pytest.raises(SettingsUnreadable, match="not a regular file"):
        install(tmp_path)
    assert not project_servers(tmp_path).exists()


def test_a_read_only_settings_file_is_refused_and_never_replaced(tmp_path: Path) -> None:
    path = write(project_settings(tmp_path), '{"theme": "dark"}')
    path.chmod(0o444)
    with pytest.raises(SettingsUnreadable, match=r"read-only \(mode 0444\)"):
        install(tmp_path)
    assert path.read_text() == '{"theme": "dark"}' and path.stat().st_mode & 0o777 == 0o444
    assert not project_servers(tmp_path).exists()


@pytest.mark.parametrize("content", ["", "  \n", "\ufeff{}"])
def test_an_empty_file_or_one_with_a_byte_order_mark_is_read_as_settings(tmp_path: Path, content: str) -> None:
    path = write(project_settings(tmp_path), content)
    install(tmp_path)
    assert json.loads(path.read_text(encoding="utf-8-sig"))["hooks"]["Stop"] == [ours("Stop")]
    assert path.read_text(encoding="utf-8").startswith("\ufeff") is content.startswith("\ufeff")


def test_strings_read_back_exactly_even_a_lone_surrogate(tmp_path: Path) -> None:
    text = '{"a": "\\ud800 and \\u00e9 and \\" and \\n", "b": "\u4e2d"}'
    path = write(project_settings(tmp_path), text)
    install(tmp_path)
    uninstall(tmp_path)
    assert json.loads(path.read_text()) == json.loads(text)


def test_the_files_permissions_are_kept(tmp_path: Path) -> None:
    path = write(project_settings(tmp_path), {"a": 1})
    path.chmod(0o600)
    install(tmp_path)
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("own", [{"theme": "dark"}, {}], ids=["with-the-users-keys", "left-holding-nothing"])
def test_a_symlinked_settings_file_is_written_through_the_link_and_never_deleted(tmp_path: Path, own: dict) -> None:
    dotfile = write(tmp_path / "dotfiles" / "claude.json", json.dumps(own))
    path = project_settings(tmp_path / "project")
    path.parent.mkdir(parents=True)
    path.symlink_to(dotfile)
    install(tmp_path / "project")
    assert path.is_symlink()
    assert json.loads(dotfile.read_text()) == {**own, "hooks": json.loads(dotfile.read_text())["hooks"]}
    uninstall(tmp_path / "project")
    assert path.is_symlink() and json.loads(dotfile.read_text()) == own


def test_a_symlink_to_nothing_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    path = project_settings(tmp_path / "project")
    path.parent.mkdir(parents=True)
    missing = tmp_path / "gone" / "deeper" / "settings.json"
    path.symlink_to(missing)
    with pytest.raises(SettingsUnreadable, match="symlink to .* which does not exist"):
        install(tmp_path / "project")
    assert path.is_symlink() and not (tmp_path / "gone").exists()


def test_user_files_follow_claude_config_dir_else_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert user_settings({"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}) == tmp_path / "cfg" / "settings.json"
    assert user_servers({"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}) == tmp_path / "cfg" / ".claude.json"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert user_settings({}) == tmp_path / ".claude" / "settings.json"
    assert user_servers({}) == tmp_path / ".claude.json"

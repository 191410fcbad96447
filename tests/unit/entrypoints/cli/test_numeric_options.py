"""Every whole-number flag of the command line refuses what is not a number in its range as a
usage error naming the flag and the rule (argparse, exit 2), never with a traceback later."""

from __future__ import annotations

import pytest

from local_mcp_memory.entrypoints.cli.main import _parser

FLAGS = [
    (["serve", "--port"], "must be an integer in 0..65535"),
    (["serve", "--max-text-chars"], "must be a positive integer"),
    (["reembed", "--batch"], "must be an integer in 1..1024"),
    (["import", "export.jsonl", "--batch"], "must be an integer in 1..1024"),
    (["context", "--limit"], "must be an integer in 1..100"),
]


@pytest.mark.parametrize(("args", "rule"), FLAGS)
@pytest.mark.parametrize("value", ["99999", "-1", "abc", "²", "1.5", "9" * 5000])
def test_a_whole_number_flag_out_of_range_or_not_a_number_is_a_usage_error(
    args: list[str], rule: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if value == "99999" and args[-1] == "--max-text-chars":
        value = "0"  # no bound above
    with pytest.raises(SystemExit) as exited:
        _parser().parse_args([*args, value])
    assert exited.value.code == 2
    assert f"argument {args[-1]}: {rule} (got " in capsys.readouterr().err


@pytest.mark.parametrize("port", ["0", "65535", " 8765"])
def test_every_port_of_0_to_65535_is_taken(port: str) -> None:
    assert _parser().parse_args(["serve", "--port", port]).port == int(port)

"""Usage errors are one line naming the command's --help, exit 2, on every command.

click's own is four lines (the usage, "Try ... for help.", a blank line, "Error: ..."); docs/refusals.md
promises one line, as for every other error.
"""

from __future__ import annotations

import pytest

from .command_tree import every_command


def _one_usage_line(result, command: str) -> str:
    assert result.exit_code == 2, (command, result.stderr)
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("castregin: error: "), result.stderr
    assert result.stderr.endswith(f"; see '{command} --help'\n"), result.stderr
    return result.stderr


@pytest.mark.parametrize("path", list(every_command()), ids=" ".join)
def test_an_unknown_option_is_one_line_naming_the_commands_help(cli, path):
    result = cli(*path, "--no-such-option-anywhere")
    message = _one_usage_line(result, " ".join(("castregin", *path)))
    if path not in (("gdeval",), ("ndeval",)):  # the drop-ins read the originals' options themselves
        assert "No such option '--no-such-option-anywhere'" in message, message


def test_click_s_suggestion_stays_on_the_line(cli, tmp_path):
    message = _one_usage_line(cli("evaluate", "a.run", "--qrel", "q.qrel"), "castregin evaluate")
    assert message == ("castregin: error: No such option '--qrel' (did you mean '--qrels'?); "
                       "see 'castregin evaluate --help'\n")
    message = _one_usage_line(cli("qrels", "merge", "a.qrel", "--provenanc", "p.json"), "castregin qrels merge")
    assert "(did you mean '--provenance'?)" in message


def test_missing_and_bad_values_and_commands(cli):
    assert _one_usage_line(cli("evaluate", "a.run"), "castregin evaluate") == (
        "castregin: error: Missing option '--qrels'; see 'castregin evaluate --help'\n")
    message = _one_usage_line(cli("evaluate", "a.run", "--qrels", "q", "--rel-level", "0"), "castregin evaluate")
    assert "Invalid value for '--rel-level': 0 is not in the range" in message
    assert _one_usage_line(cli("nosuch"), "castregin") == (
        "castregin: error: No such command 'nosuch'; see 'castregin --help'\n")
    assert _one_usage_line(cli("--bogus"), "castregin") == (
        "castregin: error: No such option '--bogus'; see 'castregin --help'\n")
    message = _one_usage_line(cli("compare", "a.run", "--qrels", "q"), "castregin compare")
    assert "compare needs at least 2 different runs" in message


def test_a_group_without_a_command_still_shows_its_help(cli):
    result = cli("qrels")
    assert "qrels [OPTIONS] COMMAND" in result.output and "Commands:" in result.output

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
    if path in DROP_INS:  # they read the originals' options themselves, and name an unknown one so too
        assert "unknown option --no-such-option-anywhere (" in message, message
    else:
        assert "No such option '--no-such-option-anywhere'" in message, message


#: The drop-ins, which take the originals' command lines (click reads none of their options).
DROP_INS = {("gdeval",), ("ndeval",), ("sample_eval",)}


def test_the_drop_ins_are_those_click_does_not_parse():
    drop_ins = {path for path, command in every_command().items() if command.context_settings.get(
        "ignore_unknown_options")}
    assert drop_ins == DROP_INS


@pytest.mark.parametrize("args, unknown", [
    (["gdeval", "-x", "q", "r"], "-x (gdeval: "), (["gdeval", "-x", "q"], "-x (gdeval: "),
    (["ndeval", "-M", "3", "-x", "q", "r"], "-x (ndeval: "), (["ndeval", "--alpha", "q"], "--alpha (ndeval: "),
    (["sample_eval", "-x", "q", "r"], "-x (sample_eval.pl: [-q] QRELS RUN)"),
    (["sample_eval", "-q", "-x", "q", "r"], "-x (sample_eval.pl: [-q] QRELS RUN)"),
    (["sample_eval", "q", "r", "-G"], "-G (sample_eval.pl: [-q] QRELS RUN)"),
])
def test_a_drop_in_names_an_option_its_original_does_not_take(cli, args, unknown):
    message = _one_usage_line(cli(*args), f"castregin {args[0]}")
    assert f"unknown option {unknown}" in message, message


def test_a_drop_in_s_own_options_without_the_files_are_not_unknown(cli):
    for args in (["gdeval", "-c", "q"], ["ndeval", "-c", "q"], ["sample_eval", "-q", "q"]):
        message = _one_usage_line(cli(*args), f"castregin {args[0]}")
        assert "unknown option" not in message and "expected " in message, message


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

"""The command reference (docs/cli.md) is what the commands print: it cannot drift from their --help.

docs/gen_cli.py writes the page; these tests write it again in memory and compare. After changing a
command's options or help, `make docs-cli` rewrites the page.
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import re
from importlib.metadata import version
from pathlib import Path

import pytest

from castregin.cli import COMMANDS

REPO = Path(__file__).resolve().parent.parent


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_cli", REPO / "docs" / "gen_cli.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen_cli = _load_generator()
#: The page as the commands print it now (~35 --help calls: made once for all the tests).
generated_page = functools.cache(gen_cli.render)


def _tested_click() -> str:
    """The click version of constraints.txt: the one whose help layout the committed page holds."""
    pins = (REPO / "constraints.txt").read_text(encoding="utf-8")
    return re.search(r"^click==(\S+)$", pins, re.MULTILINE).group(1)


@pytest.mark.skipif(version("click") != _tested_click(),
                    reason="click lays out help differently across versions (8.2 shortens summaries "
                           "otherwise); the page is what the version of constraints.txt prints")
def test_the_committed_page_is_what_the_commands_print():
    committed = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    generated = generated_page()
    if committed != generated:
        diff = "".join(difflib.unified_diff(committed.splitlines(True), generated.splitlines(True),
                                            "docs/cli.md (committed)", "the commands' --help", n=1))
        pytest.fail(f"docs/cli.md differs from the commands' --help: run `{gen_cli.REGENERATE}` and commit "
                    f"docs/cli.md\n{diff[:4000]}")


def test_the_command_table_is_read_off_the_commands():
    """castregin --help lists commands from castregin/cli/commands.json without importing them: the file
    must hold each command's own module and summary."""
    from castregin.cli import COMMAND_TABLE

    committed = Path(COMMAND_TABLE).read_text(encoding="utf-8")
    assert committed == gen_cli.command_table(), f"run `{gen_cli.REGENERATE}` and commit castregin/cli/commands.json"


def test_every_command_and_subcommand_has_its_help_on_the_page():
    paths = gen_cli.command_paths()
    assert {path[0] for path in paths if path} == set(COMMANDS)
    groups = {path[0] for path in paths if len(path) == 2}
    # The groups of today, each with its subcommands (pool: build and stats, ...).
    assert groups >= {"analyze", "convert", "ope", "paradise", "pool", "qrels", "scorekeeping"}
    page = generated_page()
    for path in paths:
        assert f"{{ #{gen_cli.anchor(path)} }}" in page
        assert f"Usage: castregin {' '.join(path)}".rstrip() in page


def test_help_is_verbatim_at_its_fixed_width():
    text = gen_cli.help_text(("qrels", "filter"))
    assert text.startswith("Usage: castregin qrels filter [OPTIONS] QRELS\n")
    assert f"```text\n{text.rstrip()}\n```" in generated_page()
    assert max(len(line) for line in text.splitlines()) <= gen_cli.HELP_WIDTH


def test_the_check_fails_on_a_stale_page(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "cli.md"
    stale.write_text(generated_page().replace("--min-label", "--minimum-label"), encoding="utf-8")
    monkeypatch.setattr(gen_cli, "PAGE", stale)
    assert gen_cli.main(["--check"]) == 1
    assert "run `make docs-cli`" in capsys.readouterr().err


def test_every_command_and_subcommand_shows_examples():
    # The docs team found eleven commands whose --help had no example to copy.
    missing = [" ".join(path) for path in gen_cli.command_paths()
               if path and not re.search(r"^  Examples\b", gen_cli.help_text(path), re.MULTILINE)]
    assert missing == []


def test_every_option_says_what_it_does():
    # --format lists its choices, which say it all; every other option has a sentence of its own.
    from castregin.cli import main

    main.load_all()
    silent = []
    for path in gen_cli.command_paths():
        command = main
        for name in path:
            command = command.commands[name]
        silent += [f"{' '.join(path)} {option.opts[-1]}" for option in command.params
                   if option.param_type_name == "option" and not option.hidden and not option.help
                   and option.name != "fmt"]
    assert silent == []


def test_comma_lists_in_option_help_are_not_broken_mid_word():
    # click wraps help at spaces: a long comma list without spaces was cut inside a name
    # ("min_label ,max_label", "not_relevant =0").
    page = generated_page()
    assert not re.search(r"\n +[,=]\w", page)


def _command_lines(text: str) -> list[str]:
    """The castregin command lines of a text (help or page), continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [line.strip() for line in joined.splitlines() if re.search(r"castregin (convert questions|tasks) ", line)]


def test_examples_on_cast_2022_question_banks_give_both_banks():
    """On CAsT 2022's pool the ReGIn bank alone fails (Q2173 is only in the official pool, the second bank:
    ../shared/cast2022/README.md): every example of `convert questions` and `tasks` that gives the ReGIn bank gives
    the pool after it. The repository's own sample bank (data/question_bank.json) holds every id of its runs."""
    texts = {"docs/cli.md": generated_page(), "README.md": (REPO / "README.md").read_text(encoding="utf-8")}
    texts.update({str(page.relative_to(REPO)): page.read_text(encoding="utf-8")
                  for page in (REPO / "docs").glob("*.md")})
    checked = 0
    for where, text in texts.items():
        for line in _command_lines(text):
            if re.search(r"--bank (\S*/)?question_bank\.json", line) and "data/question_bank.json" not in line:
                assert "--bank 2022_mixed_initiative_question_pool.json" in line, (where, line)
                checked += 1
    assert checked >= 4


def _help_examples(path: tuple[str, ...]) -> list[str]:
    """The command lines of a command's (or group's) --help examples, continuations joined, without the
    environment a line may set first (OPENAI_API_KEY=...); lines eliding an argument (``...``) left out."""
    text = gen_cli.help_text(path)
    if not re.search(r"^  Examples\b", text, re.MULTILINE):
        return []
    block = re.split(r"^  Examples[^\n]*\n", text, flags=re.MULTILINE)[1].split("\n\n")[0].replace("\\\n", " ")
    lines = [line.strip() for line in block.splitlines()]
    return [re.sub(r"^(?:\w+=\S*\s+)+", "", line) for line in lines
            if "castregin " in line and not re.search(r"\s\.\.\.(\s|$)", line)]


def _parsed(args: list[str]):
    """What click makes of ``castregin ARGS`` up to the command, its callbacks run, nothing invoked."""
    import click

    from castregin.cli import main

    context = main.make_context("castregin", list(args))
    group = main
    while isinstance(group, click.Group):
        name, command, rest = group.resolve_command(context, [*context._protected_args, *context.args])
        context = command.make_context(name, rest, parent=context)
        group = command
    return context


@pytest.mark.parametrize("path", [path for path in gen_cli.command_paths() if _help_examples(path)],
                         ids=lambda path: " ".join(path) or "castregin")
def test_every_help_example_is_a_command_line_castregin_takes(path):
    """Each --help example parses: its options exist, their values are of their types and ranges, the
    callbacks (pool --sample's strata, simulate's --budgets) take them. (docs/test_docs_examples.py runs the
    pages' examples; these are the reference's.)"""
    import shlex

    import click

    for line in _help_examples(path):
        words = shlex.split(line, comments=True)
        assert words[0] == "castregin", line
        try:
            _parsed(words[1:])
        except (click.exceptions.Exit, click.ClickException) as error:
            raise AssertionError(f"{line}: {error}") from error

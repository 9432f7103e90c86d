"""Every example of the README and of the documentation's pages runs.

Each ```python block of README.md and of docs/*.md runs. A page's blocks run in its order, in one
namespace (later examples use what earlier ones made, as a reader following along would), in a scratch
directory that shows the repository's files (data/, tests/, docs/ ... linked) and keeps what the examples
write (out/), so that the checkout is left as it was; an example that raises or warns fails the test with
the page's line in its message and traceback. A block that is not meant to run is marked by a
``<!-- not run -->`` comment on the line before its opening fence (the registry example of
docs/evaluate.md, which would register a measure for every later test; tests/evaluation/
test_toy_measure.py registers one in a fixture instead); nothing else is skipped.

The README's shell pipeline (its ```sh block of ``castregin`` commands) runs too, command by command, in
a scratch directory beside the sample data, so that a renamed option cannot leave it stale.
"""

from __future__ import annotations

import re
import shlex
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from castregin.cli import main

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
PAGES = sorted((REPO / "docs").glob("*.md"))
DOCS_API = REPO / "docs" / "api.md"
NOT_RUN = "<!-- not run -->"
_FENCE = re.compile(r"^```python[ \t]*$")


def python_blocks(text: str) -> list[tuple[int, str]]:
    """``(line of the first code line, code)`` of each ```python block not marked ``<!-- not run -->``."""
    lines = text.splitlines()
    blocks = []
    index = 0
    while index < len(lines):
        if _FENCE.match(lines[index]):
            start = index + 1
            end = start
            while end < len(lines) and lines[end].rstrip() != "```":
                end += 1
            marked = index > 0 and lines[index - 1].strip() == NOT_RUN
            if not marked:
                blocks.append((start + 1, "\n".join(lines[start:end]) + "\n"))
            index = end
        index += 1
    return blocks


def test_the_extractor_sees_blocks_and_the_marker():
    text = "a\n```python\nx = 1\n```\n<!-- not run -->\n```python\nraise SystemExit\n```\n```sh\nls\n```\n"
    assert python_blocks(text) == [(3, "x = 1\n")]


def run_examples(page: Path) -> int:
    """Run the blocks of ``page`` in order, in one namespace; return how many ran.

    An example that raises (or warns) raises AssertionError naming its page and line.
    """
    namespace: dict = {"__name__": "__docs__"}
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    for line, code in blocks:
        # Padding puts the code at its line of the page, so a traceback points there.
        compiled = compile("\n" * (line - 1) + code, str(page), "exec")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an example that warns is not one to copy
            try:
                exec(compiled, namespace)  # noqa: S102 - the docs' own examples, run to prove they work
            except Exception as error:
                raise AssertionError(f"{page.name} example at line {line} raised "
                                     f"{type(error).__name__}: {error}") from error
    return len(blocks)


def test_a_raising_example_fails(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```python\nvalue = 1\n```\n\ntext\n\n```python\nassert value == 2\n```\n")
    with pytest.raises(AssertionError, match=r"page\.md example at line 8 raised AssertionError"):
        run_examples(page)


#: What the examples write into, never linked into the scratch directory from the checkout.
WRITTEN = {"out"}


def scratch_checkout(directory: Path) -> Path:
    """``directory`` showing the repository's files as the examples read them (each top-level entry linked,
    but what they write), to run them in."""
    for entry in REPO.iterdir():
        if entry.name not in WRITTEN and not entry.name.startswith("."):
            (directory / entry.name).symlink_to(entry)
    return directory


def _checkout_files() -> dict[str, int]:
    """The checkout's files and their modification times (what an example writing into it would change)."""
    skipped = {".git", ".venv", ".venv-min", ".venv-bench", "site", "__pycache__", ".pytest_cache", ".hypothesis",
               ".mypy_cache", ".ruff_cache"}
    found = {}
    for path in REPO.rglob("*"):
        if not skipped & set(path.relative_to(REPO).parts) and path.is_file() and not path.is_symlink():
            found[path.relative_to(REPO).as_posix()] = path.stat().st_mtime_ns
    return found


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda page: page.relative_to(REPO).as_posix())
def test_every_python_example_runs(page, monkeypatch, tmp_path):
    monkeypatch.chdir(scratch_checkout(tmp_path))
    run_examples(page)


def test_the_examples_leave_the_checkout_as_it_was(monkeypatch, tmp_path):
    # docs/api.md writes out/api/: into the scratch directory, not beside the sources.
    before = _checkout_files()
    monkeypatch.chdir(scratch_checkout(tmp_path))
    assert run_examples(DOCS_API) > 0
    assert (tmp_path / "out" / "api").is_dir()
    assert _checkout_files() == before


def test_the_api_page_has_its_examples():
    # The Python examples live on the API page; an extractor that found none there would test nothing.
    assert len(python_blocks((REPO / "docs" / "api.md").read_text(encoding="utf-8"))) >= 5


def shell_commands(text: str, heading: str) -> list[list[str]]:
    """The ``castregin`` command lines (continuations joined, split as a shell would) of the first ```sh
    block under ``heading``."""
    section = text.split(heading, 1)[1]
    block = section.split("```sh\n", 1)[1].split("\n```", 1)[0]
    joined = block.replace("\\\n", " ")
    return [shlex.split(line, comments=True) for line in joined.splitlines() if line.strip()]


def test_the_readme_pipeline_runs(tmp_path, monkeypatch):
    commands = shell_commands(README.read_text(encoding="utf-8"), "## The pipeline in six commands")
    assert [command[:2] for command in commands] == [["castregin", "convert"], ["castregin", "pool"],
                                                     ["castregin", "aggregate"], ["castregin", "evaluate"],
                                                     ["castregin", "compare"], ["castregin", "report"]]
    (tmp_path / "data").symlink_to(REPO / "data")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for command in commands:
        result = runner.invoke(main, command[1:], prog_name="castregin")
        assert result.exit_code == 0, f"{shlex.join(command)} exited {result.exit_code}: {result.output}"
    assert (tmp_path / "out" / "report" / "index.html").is_file()

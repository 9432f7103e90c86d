"""Every ```python block of README.md runs.

The blocks run in the order of the README, in one namespace (later examples use what earlier ones
made, as a reader following along would), with the repository's root as the working directory;
an example that raises fails the test with the README's line in its traceback. A block that is not
meant to run is marked by a ``<!-- not run -->`` comment on the line before its opening fence (none
is, today); nothing else is skipped.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
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


def run_examples(readme: Path) -> int:
    """Run the blocks of ``readme`` in order, in one namespace; return how many ran.

    An example that raises (or warns) raises AssertionError naming its README line.
    """
    namespace: dict = {"__name__": "__readme__"}
    blocks = python_blocks(readme.read_text(encoding="utf-8"))
    for line, code in blocks:
        # Padding puts the code at its README line, so a traceback points there.
        compiled = compile("\n" * (line - 1) + code, str(readme), "exec")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an example that warns is not one to copy
            try:
                exec(compiled, namespace)
            except Exception as error:
                raise AssertionError(f"{readme.name} example at line {line} raised "
                                     f"{type(error).__name__}: {error}") from error
    return len(blocks)


def test_a_raising_example_fails(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("```python\nvalue = 1\n```\n\ntext\n\n```python\nassert value == 2\n```\n")
    with pytest.raises(AssertionError, match="example at line 8 raised AssertionError"):
        run_examples(readme)


def test_every_python_example_of_the_readme_runs(monkeypatch):
    monkeypatch.chdir(REPO)
    assert run_examples(README) >= 5

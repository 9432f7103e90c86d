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

import glob
import os
import re
import shlex
import shutil
import threading
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


# --- the new commands as a new user meets them: transcripts and command lines of README.md and docs/*.md -------

#: A test server's base URL in the pages' examples, replaced by the running server's.
_LOCAL_URL = re.compile(r"http://(?:127\.0\.0\.1|localhost):\d+/v1|https://api\.openai\.com/v1")


def text_blocks(text: str, language: str) -> list[tuple[int, list[str]]]:
    """``(line of the fence, lines)`` of each ```language block (``""``: a fence without a language)."""
    blocks: list[tuple[int, list[str]]] = []
    opened: tuple[int, str] | None = None
    lines = text.splitlines()
    for index, row in enumerate(lines):
        if opened is None and row.startswith("```"):
            opened = (index, row[3:].strip())
        elif opened is not None and row.rstrip() == "```":
            if opened[1] == language:
                blocks.append((opened[0] + 1, lines[opened[0] + 1:index]))
            opened = None
    return blocks


def transcripts(text: str) -> list[tuple[int, list[tuple[str, list[str]]]]]:
    """The ```text blocks that show commands and what they print (``$ castregin ...`` lines, then the output):
    ``(line, [(command, shown lines)])``."""
    found = []
    for line, block in text_blocks(text, "text"):
        if not block or not block[0].startswith("$ castregin "):
            continue
        steps: list[tuple[str, list[str]]] = []
        for row in block:
            if row.startswith("$ "):
                steps.append((row[2:], []))
            else:
                steps[-1][1].append(row)
        found.append((line, steps))
    return found


def shown_as_printed(shown: list[str], stdout: str, stderr: str) -> bool:
    """Whether ``shown`` is what was printed: standard output line by line (a line ``...`` standing for lines
    left out, a line ending `` ...`` for the rest of a line, columns left out), and any ``castregin:`` line of
    standard error where the page shows it (the page may leave those out)."""
    errors = {row.rstrip() for row in stderr.splitlines()}
    out = [row.rstrip() for row in shown if not (row.startswith("castregin: ") and row.rstrip() in errors)]
    pattern = "".join(r"(?:.*\n)*?" if row == "..." else
                      re.escape(row[:-4]) + r".*\n" if row.endswith(" ...") else re.escape(row) + "\n" for row in out)
    return re.fullmatch(pattern, "".join(row.rstrip() + "\n" for row in stdout.splitlines())) is not None


def test_the_transcript_reader_and_matcher():
    text = "```text\n$ castregin a\nx\n...\n$ castregin b\ncastregin: warning: w\ny\n```\n```text\nplain\n```\n"
    assert transcripts(text) == [(1, [("castregin a", ["x", "..."]), ("castregin b", ["castregin: warning: w", "y"])])]
    assert shown_as_printed(["x", "..."], "x\n1\n2\n", "")
    assert shown_as_printed(["a  ", "c"], "a\nc\n", "castregin: note\n")
    assert not shown_as_printed(["a", "c"], "a\nb\nc\n", "")
    assert shown_as_printed(["castregin: warning: w", "y"], "y\n", "castregin: warning: w\n")
    assert not shown_as_printed(["castregin: warning: w", "y"], "y\n", "")
    assert shown_as_printed(["...", "a  b ...", "..."], "x\na  b  c\ny\n", "")
    assert not shown_as_printed(["a  b ..."], "a  c\n", "")


PAGES_WITH_TRANSCRIPTS = [page for page in [README, *PAGES] if transcripts(page.read_text(encoding="utf-8"))]


@pytest.fixture(scope="module")
def nugget_server():
    from nuggets.nugget_server import serve_nuggets

    server = serve_nuggets(faults=False)
    yield server
    server.shutdown()


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A directory beside the repository's data and tests (as the pages' paths expect), the working directory."""
    for name in ("data", "tests"):
        (tmp_path / name).symlink_to(REPO / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(command: str | list[str], url: str | None = None):
    args = shlex.split(command, comments=True) if isinstance(command, str) else list(command)
    assert args[0] == "castregin", args
    args = [_LOCAL_URL.sub(url, arg) if url else arg for arg in args[1:]]
    expanded = []
    for arg in args:  # the shell's globs (runs/*.run), in the working directory
        expanded.extend(sorted(glob.glob(arg)) or [arg] if "*" in arg else [arg])
    return CliRunner().invoke(main, expanded, prog_name="castregin", catch_exceptions=False)


@pytest.mark.parametrize("page", PAGES_WITH_TRANSCRIPTS, ids=lambda page: page.relative_to(REPO).as_posix())
def test_every_transcript_prints_what_it_shows(page, scratch, nugget_server):
    """A ```text block starting `$ castregin ...` shows commands and their output: each runs (in the page's
    order, in one directory beside data/ and tests/; a model's commands against the nugget rule server of
    the tests) and prints what the page shows."""
    for line, steps in transcripts(page.read_text(encoding="utf-8")):
        for command, shown in steps:
            result = _run(command, nugget_server.base_url)
            where = f"{page.name}:{line}: {command}"
            assert result.exit_code == 0, f"{where} exited {result.exit_code}: {result.stderr}"
            assert shown_as_printed(shown, result.stdout, result.stderr), (
                f"{where} printed\n{result.stdout}{result.stderr}\nwhere the page shows\n" + "\n".join(shown))


def test_the_transcripts_of_the_new_commands_are_found():
    commands = [command for page in PAGES_WITH_TRANSCRIPTS
                for _, steps in transcripts(page.read_text(encoding="utf-8")) for command, _ in steps]
    assert {" ".join(shlex.split(command)[1:3]) for command in commands} >= {
        "nuggets score", "nuggets assign", "nuggets cite", "compare --scores"}


#: The new commands (their first words, or an option or measure of theirs): each ```sh block running one runs
#: in a directory made for it.
NEW_COMMANDS = {"nuggets score", "nuggets assign", "nuggets create", "nuggets cite", "play", "sample_eval",
                "analyze ppi", "pool simulate"}
NEW_WORDS = {"--sample", "--strategy", "xinfAP"}


def is_new_command(command: str) -> bool:
    words = shlex.split(command, comments=True)
    return bool(words[1] in NEW_COMMANDS or " ".join(words[1:3]) in NEW_COMMANDS or NEW_WORDS & set(words))


def sh_blocks_of_the_new_commands() -> list[tuple[str, int, list[str]]]:
    """``(page, line, command lines)`` of each ```sh block of README.md and docs/*.md (but the generated
    reference) that runs one of the new commands; lines that are not castregin's (a server started) left out."""
    found = []
    for page in [README, *PAGES]:
        if page.name == "cli.md":
            continue
        for line, block in text_blocks(page.read_text(encoding="utf-8"), "sh"):
            joined = "\n".join(block).replace("\\\n", " ")
            commands = [row for row in joined.splitlines() if row.strip().startswith("castregin ")]
            if any(is_new_command(row) for row in commands):
                found.append((page.relative_to(REPO).as_posix(), line, commands))
    return found


def _runs_and_qrels(directory: Path) -> None:
    """docs/sampling.md's files: three runs of 12 turns in runs/, the complete qrels of what they
    rank, the judgments of a sample, a model's labels of every turn and people's of half of them."""
    import random

    rng = random.Random(5)
    (directory / "runs").mkdir()
    truth = {f"{t}_1-1": {f"d{i}": rng.choice([0, 0, 0, 1, 2, 3]) for i in range(40)} for t in range(100, 112)}
    for skill, name in ((0.2, "bm25"), (0.6, "dense"), (1.0, "rerank")):
        lines = []
        for turn, labels in truth.items():
            scores = {item: label * skill + rng.random() * 3 for item, label in labels.items()}
            ranked = sorted(scores, key=lambda item: -scores[item])
            lines += [f"{turn} Q0 {item} {rank} {scores[item]:.4f} {name}\n" for rank, item in enumerate(ranked, 1)]
        (directory / "runs" / f"{name}.run").write_text("".join(lines))

    def qrels(labels: dict) -> str:
        return "".join(f"{turn} 0 {item} {label}\n" for turn, items in labels.items() for item, label in items.items())

    model = {turn: {item: max(0, min(3, label + rng.choice([-1, 0, 0, 1]))) for item, label in items.items()}
             for turn, items in truth.items()}
    (directory / "question_relevance_all.qrel").write_text(qrels(truth))
    (directory / "judged.qrel").write_text(qrels(truth))
    (directory / "llm.qrel").write_text(qrels(model))
    (directory / "human_sample.qrel").write_text(qrels(dict(list(truth.items())[::2])))


def _sampled(directory: Path) -> None:
    """docs/sampling.md's files once the sample is judged: its first block's stratified qrels too."""
    _runs_and_qrels(directory)
    made = _run("castregin pool runs/ --sample 1-10:1,11-50:0.5,51-1000:10% --seed 7 -o sample.pool "
                "--strata-out stratified.qrel --qrels judged.qrel")
    assert made.exit_code == 0, made.stderr


def _assignments(directory: Path) -> None:
    """docs/nuggets.md's first files: iKAT 2024's human assignments (one run named bm25-gpt4o), and a second
    source's scores."""
    (directory / "assignments").mkdir()
    for path in sorted((REPO / "tests/nuggets/data/cone_rag_human").glob("*.jsonl")):
        text = path.read_text(encoding="utf-8").replace('"run_id": "iires-1"', '"run_id": "bm25-gpt4o"')
        (directory / "assignments" / path.name).write_text(text, encoding="utf-8")
    made = _run(["castregin", "nuggets", "score", "assignments", "--name", "gpt-4o", "-q", "--no-vital", "skip",
                 "--format", "tsv", "-o", "gpt4o.tsv"])
    assert made.exit_code == 0, made.stderr


def _games(directory: Path) -> None:
    (directory / "clembench").mkdir()
    (directory / "clembench" / "privateshared").symlink_to(REPO / "tests/data/privateshared/clembench")


#: Each block's directory: (page, its first command's first words) -> what goes in it.
SH_SETUPS = {
    ("README.md", "castregin play privateshared"): _games,
    ("docs/dialogue.md", "castregin play privateshared"): _games,
    ("docs/nuggets.md", "castregin nuggets score"): _assignments,
    ("docs/nuggets.md", "castregin nuggets create"): "data/nuggets",
    ("docs/sampling.md", "castregin pool runs/"): _runs_and_qrels,
    ("docs/sampling.md", "castregin evaluate runs/*.run"): _sampled,
}


#: Blocks that cannot run here, and why (where they are run instead).
NOT_RUN_HERE = {
    ("docs/nuggets.md", "castregin nuggets tasks"): "people's labels: the crowd CSVs of the judging pages come "
                                                    "between its lines (tests/judging/test_nugget_tasks.py runs "
                                                    "the flow on labels it makes)",
}


def _setup_key(page: str, commands: list[str]) -> tuple[str, str]:
    return page, " ".join(commands[0].split()[:3])


def test_every_sh_block_of_the_new_commands_has_its_files():
    blocks = sh_blocks_of_the_new_commands()
    assert {_setup_key(page, commands) for page, _, commands in blocks} == set(SH_SETUPS) | set(NOT_RUN_HERE)
    assert len(blocks) >= 7


@pytest.fixture(scope="module")
def game_server():
    """The scripted players of tests/dialogue; a model they do not name (the pages' llama3.1:8b) plays truthfully."""
    from dialogue.game_server import GameServer

    class AnyModel(GameServer):
        def reply(self, body: dict):
            return self.players.get(body["model"], self.players["truthful"])(body["messages"]), None

    server = AnyModel(REPO / "tests/data/privateshared/clembench")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


@pytest.mark.parametrize(("page", "line", "commands"), sh_blocks_of_the_new_commands(),
                         ids=[f"{page}:{line}" for page, line, _ in sh_blocks_of_the_new_commands()])
def test_every_command_line_of_the_new_commands_runs(page, line, commands, scratch, nugget_server, game_server):
    """Each ```sh block that runs a new command runs as written, line by line, in a directory holding the files
    it names (SH_SETUPS), a model's commands against the test servers (the rule server of tests/nuggets, the
    scripted players of tests/dialogue): a renamed option, a wrong combination or a file the example cannot
    have fails here."""
    if _setup_key(page, commands) in NOT_RUN_HERE:
        pytest.skip(NOT_RUN_HERE[_setup_key(page, commands)])
    setup = SH_SETUPS[_setup_key(page, commands)]
    if isinstance(setup, str):
        shutil.copytree(REPO / setup, scratch / "example")
        os.chdir(scratch / "example")
    else:
        setup(scratch)
    for command in commands:
        url = game_server.base_url if "castregin play" in command else nugget_server.base_url
        result = _run(command, url)
        assert result.exit_code == 0, f"{page}:{line}: {command} exited {result.exit_code}: {result.stderr}"
        if page == "README.md":  # the README shows what it prints, in the plain block right after
            shown = next(block for at, block in text_blocks(README.read_text(encoding="utf-8"), "") if at > line)
            assert result.stdout.splitlines() == shown, result.stdout


def test_the_readme_s_pool_simulate_table_is_what_it_prints(cast2022, run_paths):
    """The README's judgments for Kendall's tau >= 0.9 on the four CAsT 2022 baselines and the ReGIn relevance
    qrels, the pool being everything the runs rank, are what `pool simulate` gives (its numbers are checked
    against pytrec_eval and scipy in tests/evaluation/test_pooling_simulation.py)."""
    from castregin.evaluation.pooling import simulate_pooling
    from castregin.formats import read_qrels, read_run

    text = README.read_text(encoding="utf-8")
    rows = re.findall(r"^\| (nDCG@3|AP) \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \|$", text, re.MULTILINE)
    assert [row[0] for row in rows] == ["nDCG@3", "AP"] and "33,057 pairs" in text
    runs = [read_run(path) for path in run_paths]
    qrels = read_qrels(cast2022 / "regin/qrels/question_relevance_all.qrel")
    for measure, *needed in rows:
        simulation = simulate_pooling(runs, qrels, measure=measure)
        assert simulation.pool == 33_057
        assert simulation.needed == dict(zip(("depth", "mtf", "bandit"), (int(n.replace(",", "")) for n in needed),
                                             strict=True)), measure

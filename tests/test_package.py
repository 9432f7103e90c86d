"""The package people install.

``python -m build`` makes the sdist and then the wheel from that sdist, as pip builds from an sdist. The
wheel holds every file castregin reads at run time (the report's and judging page's templates, JS and
CSS, the JSON schemas), neither archive holds anything of tests/, and the wheel installed on its own runs
``castregin --version``, an evaluation and a report from a directory outside the source tree, and
completes commands in bash.

The build runs once per session, on a copy of the tree (setuptools writes castregin.egg-info beside
pyproject.toml). The wheel is installed with ``pip install --no-deps --target`` and run by this
environment's Python with that directory first on PYTHONPATH: its dependencies are the tested ones, and
each test checks that the castregin it ran came from the wheel, not from the editable install of the tree.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: build brings tomli
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
# Everything a build of the tree must not see: environments, caches, earlier builds, outputs.
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv*", "__pycache__", "*.pyc", "*.egg-info", "build", "dist",
                                    ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache", "out",
                                    "bench-out", "site")

def _package_files() -> set[str]:
    """The files of castregin/ in the tree, as paths inside an archive: what the wheel must hold."""
    root = REPO / "castregin"
    return {f"castregin/{p.relative_to(root).as_posix()}" for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


@pytest.fixture(scope="session")
def dist(tmp_path_factory) -> dict[str, Path]:
    """The sdist and the wheel built from it: ``{"sdist": ..., "wheel": ...}``."""
    source = tmp_path_factory.mktemp("package") / "castregin"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    out = source.parent / "dist"
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(source)],
                          capture_output=True, text=True, check=False, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (sdist,), (wheel,) = out.glob("*.tar.gz"), out.glob("*.whl")
    return {"sdist": sdist, "wheel": wheel}


@pytest.fixture(scope="session")
def installed(dist, tmp_path_factory) -> Path:
    """The wheel installed alone (no dependencies) in a directory of its own."""
    target = tmp_path_factory.mktemp("site") / "lib"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile", "--target",
           str(target)]
    subprocess.run([*pip, str(dist["wheel"])], check=True, capture_output=True, timeout=300)
    return target


def _run(installed: Path, cwd: Path, *args: str, **variables: str) -> subprocess.CompletedProcess:
    """The installed ``castregin`` script, with only the wheel's directory added to the path (and
    ``variables`` to the environment)."""
    env = {**os.environ, "PYTHONPATH": str(installed), **variables}
    return subprocess.run([str(installed / "bin" / "castregin"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False, timeout=120)


def test_the_wheel_holds_every_file_castregin_reads_and_no_test(dist):
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        names = set(wheel.namelist())
    in_package = {n for n in names if n.startswith("castregin/")}
    assert in_package == _package_files()
    # The files read at run time, named: a package-data rule that drops one fails here too.
    for needed in ("render/templates/report.html.j2", "render/templates/report.css",
                   "render/templates/judging_page.js", "render/templates/judging_page.css",
                   "judging/rubrics.json", "judging/nugget_rubrics.json", "render/templates/page_common.js",
                   "formats/schemas/mi-run.json",
                   "dialogue/privateshared_texts/resources/en_words.json"):
        assert f"castregin/{needed}" in names
    assert not [n for n in names if n.startswith("tests/") or "/tests/" in n]
    assert {n for n in names - in_package if not n.startswith("castregin-")} == set()  # and the .dist-info
    # The MIT license text travels with the wheel (PEP 639: .dist-info/licenses/).
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_the_sdist_holds_the_package_and_no_test(dist):
    with tarfile.open(dist["sdist"]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert _package_files() <= names
    assert {"pyproject.toml", "README.md"} <= names
    assert not [n for n in names if n == "tests" or n.startswith("tests/")]


def test_the_wheel_requires_the_runtime_dependencies_only(dist):
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        metadata = next(wheel.read(n).decode() for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    requires = [Requirement(line.split(":", 1)[1]) for line in metadata.splitlines()
                if line.startswith("Requires-Dist:")]
    runtime = sorted(str(r) for r in requires if r.marker is None)
    assert runtime == sorted(str(Requirement(r)) for r in PROJECT["dependencies"])


def test_installed_wheel_prints_its_version(installed, tmp_path):
    result = _run(installed, tmp_path, "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"castregin, version {PROJECT['version']}\n"


def test_installed_wheel_runs_from_the_wheel_not_the_tree(installed, tmp_path):
    # The module, and the metadata --version reads, both from the wheel's directory.
    code = ("import importlib.metadata, castregin, castregin.cli\n"
            "print(castregin.__file__)\n"
            "print(importlib.metadata.distribution('castregin').locate_file('castregin/__init__.py'))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          check=True, env={**os.environ, "PYTHONPATH": str(installed)}, timeout=120)
    module, metadata = done.stdout.splitlines()
    assert Path(module) == Path(metadata) == installed / "castregin" / "__init__.py"


def test_installed_wheel_evaluates_and_writes_a_report(installed, tmp_path):
    # Two turns: the first's top item is relevant, the second's top item is unjudged and its relevant item
    # second. By hand: P@1 = (1 + 0) / 2 = 0.5, RR = (1 + 1/2) / 2 = 0.75.
    (tmp_path / "q.qrel").write_text("1_1 0 a 2\n1_1 0 b 0\n1_2 0 c 2\n")
    (tmp_path / "r.run").write_text("1_1 Q0 a 1 2.0 r\n1_1 Q0 b 2 1.0 r\n"
                                    "1_2 Q0 d 1 2.0 r\n1_2 Q0 c 2 1.0 r\n")
    result = _run(installed, tmp_path, "evaluate", "r.run", "--qrels", "q.qrel", "-m", "P@1", "-m", "RR",
                  "--format", "json")
    assert result.returncode == 0, result.stderr
    values = {row["measure"]: row["value"] for row in json.loads(result.stdout)}
    assert values == {"num_q": 2, "P@1": 0.5, "RR": 0.75}

    # The report reads its templates and embeds its CSS from the installed package.
    result = _run(installed, tmp_path, "report", "r.run", "--qrels", "q.qrel", "-m", "P@1", "--out", "report")
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    css = (REPO / "castregin/render/templates/report.css").read_text(encoding="utf-8").splitlines()
    plain = [line for line in css if line.strip() and not set(line) & set("\"'&<>")]  # as HTML escapes none
    assert plain and all(line in page for line in plain)


def test_installed_script_completes_commands_and_options(installed, tmp_path):
    # Click's shell completion as the docs enable it, `eval "$(_CASTREGIN_COMPLETE=bash_source castregin)"`;
    # the shell then calls the script back with the words typed so far.
    source = _run(installed, tmp_path, _CASTREGIN_COMPLETE="bash_source")
    assert "complete -o nosort -F _castregin_completion castregin" in source.stdout
    for words, expected in (("castregin ev", "plain,evaluate"),
                            ("castregin evaluate --score-p", "plain,--score-precision")):
        done = _run(installed, tmp_path, _CASTREGIN_COMPLETE="bash_complete", COMP_WORDS=words,
                    COMP_CWORD=str(len(words.split()) - 1))
        assert done.returncode == 0 and done.stdout.split() == [expected], done.stderr

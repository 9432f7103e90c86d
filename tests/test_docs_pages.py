"""The README and the documentation's pages hold together: what they name exists, every page is reachable.

mkdocs build --strict (`make docs`) checks the links between pages; these tests need no mkdocs and run
in `make test`: the files the pages name, the README's links, the site's navigation, and the check that
the built site fetches nothing from the network.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
README = REPO / "README.md"
PAGES = sorted(DOCS.glob("*.md"))
#: A file of the repository named in inline code: `tests/cli/test_trec_eval.py`, `castregin/limits.py`.
_NAMED_PATH = re.compile(r"`((?:castregin|tests|benchmarks|data|docs)/[^`\s]*)`")
_MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def test_every_file_the_pages_name_exists():
    missing = []
    for page in [README, *PAGES]:
        for name in _NAMED_PATH.findall(_text(page)):
            if any(mark in name for mark in ("<", "*", "{", "...")):
                continue  # a pattern (tests/<package>/test_<module>.py, tests/...), not a file
            if not (REPO / name.rstrip("/")).exists():
                missing.append(f"{page.relative_to(REPO)}: {name}")
    assert not missing, "pages name files that do not exist:\n" + "\n".join(missing)


def test_the_readme_links_to_pages_that_exist():
    links = [link for link in _MARKDOWN_LINK.findall(_text(README)) if "://" not in link]
    assert len(links) >= 20
    missing = [link for link in links if not (REPO / link.split("#", 1)[0]).is_file()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_the_readme_keeps_the_quick_start_and_the_choices():
    readme = _text(README)
    assert "make demo" in readme and "make test" in readme
    assert "## Choices where the SPEC is silent" in readme
    assert "(docs/choices.md)" in readme  # the list at length


#: The README is the front door: what a newcomer reads first, with the rest one link away in docs/.
README_MAX_BYTES = 15_000


def test_the_readme_stays_short():
    size = len(README.read_bytes())
    assert size < README_MAX_BYTES, (f"README.md is {size:,} bytes, more than {README_MAX_BYTES:,}: move the "
                                     "details into a page of docs/ and link it")


def test_no_page_quotes_a_count_of_the_tests():
    # The README said "2,298 tests" long after the suite had grown: a count nothing regenerates goes stale.
    counts = [f"{page.relative_to(REPO)}: {match}" for page in [README, *PAGES]
              for match in re.findall(r"\b\d(?:[\d,]*\d)? tests\b", _text(page))]
    assert not counts, f"pages quote counts of the tests, which go stale: {counts}"


def test_no_line_of_prose_starts_a_quote():
    # A wrapped line starting with `>=` would become a block quote, cutting a sentence in two.
    quoted = []
    for page in [README, *PAGES]:
        prose = re.sub(r"```.*?```", "", _text(page), flags=re.DOTALL)
        quoted += [f"{page.name}: {line}" for line in prose.splitlines() if line.lstrip().startswith(">")]
    assert not quoted, "lines Markdown reads as quotes:\n" + "\n".join(quoted)


def test_every_page_is_in_the_navigation_and_every_entry_is_a_page():
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    entries = re.findall(r"^\s*- [^\n]*?:\s*(\S+\.md)\s*$", config, re.MULTILINE)
    assert sorted(entries) == sorted(page.name for page in PAGES)


def _load_site_checker():
    spec = importlib.util.spec_from_file_location("check_site", DOCS / "check_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_site_check_finds_what_a_page_would_fetch(tmp_path):
    check_site = _load_site_checker()
    (tmp_path / "index.html").write_text(
        '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">'
        '<link rel="preconnect" href="https://fonts.gstatic.com"><link rel="next" href="https://example.org/2">'
        '<link rel="stylesheet" href="assets/main.css"><script src="//cdn.example.org/x.js"></script>'
        '<img src="img/a.png"><a href="https://squidfunk.github.io/mkdocs-material/">Material</a>')
    (tmp_path / "main.css").write_text('@import "https://x.org/y.css"; .a{background:url(img/a.png)}')
    found = check_site.remote_fetches(tmp_path)
    assert [line.split(": ", 1)[1] for line in found] == [
        "<link href='https://fonts.googleapis.com/css?family=Roboto'>",
        "<link href='https://fonts.gstatic.com'>",
        "<script src='//cdn.example.org/x.js'>",
        "url(https://x.org/y.css)",
    ]
    assert [line.split(": ", 1)[0] for line in found] == [str(tmp_path / "index.html")] * 3 + [
        str(tmp_path / "main.css")]

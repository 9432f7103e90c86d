"""The built-in prompts are nuggetizer 0.0.5's, message for message, whatever the texts hold (nuggetizer's own
prompt functions are the oracle); a user's template is sandboxed as judge's are; passage and query files are
read in every shape the tracks distribute, and bad lines are one error line."""

from __future__ import annotations

import gzip
import json
import types

import pytest

from castregin.errors import InputError
from castregin.formats.passages import Passage, parse_queries, read_passages
from castregin.render.nugget_prompts import load_nugget_prompt

TRICKY = ["It's \"quoted\" both ways", "a back\\slash", "two\nlines", "naïve café — ünïcödé", "{{ not jinja }}"]


@pytest.fixture(scope="module")
def oracle():
    """nuggetizer 0.0.5's prompt methods, on an object holding the settings they read."""
    from nuggetizer.core.types import NuggetAssignMode
    from nuggetizer.models.nuggetizer import Nuggetizer

    fake = types.SimpleNamespace(creator_max_nuggets=30, assigner_mode=NuggetAssignMode.SUPPORT_GRADE_3)
    fake._get_nugget_prompt_content = types.MethodType(Nuggetizer._get_nugget_prompt_content, fake)
    fake._get_assign_prompt_content = types.MethodType(Nuggetizer._get_assign_prompt_content, fake)
    return Nuggetizer, fake


@pytest.mark.parametrize("grades", [3, 2])
def test_the_assignment_prompts_are_nuggetizers(oracle, grades):
    from nuggetizer.core.types import NuggetAssignMode, ScoredNugget

    nuggetizer, fake = oracle
    fake.assigner_mode = NuggetAssignMode.SUPPORT_GRADE_3 if grades == 3 else NuggetAssignMode.SUPPORT_GRADE_2
    query, answer = "What's {this}?", "An answer with {braces}, 'quotes' and\na line break."
    theirs = nuggetizer._create_assign_prompt(fake, query, answer, [ScoredNugget(t, "vital") for t in TRICKY])
    prompt = load_nugget_prompt("assign", "nuggetizer" if grades == 3 else "nuggetizer-2grade")
    assert list(prompt.assign("q", "run", query, [], answer, TRICKY)) == theirs


def test_the_creation_and_scoring_prompts_are_nuggetizers(oracle):
    from nuggetizer.core.types import Document, Nugget, Query, Request

    nuggetizer, fake = oracle
    documents = [Document("d1", "First {passage}."), Document("d2", 'Second "passage"\nover two lines.')]
    request = Request(Query("q", "Why {so}?"), documents)
    theirs = nuggetizer._create_nugget_prompt(fake, request, 0, 2, TRICKY)
    create = load_nugget_prompt("create", "nuggetizer")
    assert list(create.create("q", "Why {so}?", [], [(d.docid, d.segment) for d in documents], TRICKY, 30)) == theirs
    theirs = nuggetizer._create_score_prompt(fake, "Why {so}?", [Nugget(t) for t in TRICKY])
    assert list(load_nugget_prompt("score", "nuggetizer").score("q", "Why {so}?", [], TRICKY)) == theirs


def test_a_users_template_is_sandboxed_and_failures_are_one_line(tmp_path):
    template = tmp_path / "t.j2"
    template.write_text("{{ nuggets | length }} nuggets for {{ qid }}: {{ 1 / 0 }}")
    prompt = load_nugget_prompt("assign", str(template))
    with pytest.raises(InputError, match=r"t\.j2: the template fails on run r, turn q: division by zero"):
        prompt.assign("q", "r", "query", [], "answer", ["n"])
    template.write_text("{% include 'other.j2' %}")
    with pytest.raises(InputError, match="reads another template"):
        load_nugget_prompt("create", str(template))
    template.write_text("{{ '' }}")
    with pytest.raises(InputError, match="renders nothing for turn q"):
        load_nugget_prompt("score", str(template)).score("q", "query", [], ["n"])
    digests = {load_nugget_prompt(task, name).describe()["sha256"] for task, name in
               (("cite", "support"), ("assign", "nuggetizer"), ("assign", "nuggetizer-2grade"))}
    assert len(digests) == 3


def test_passages_in_every_shape(tmp_path):
    segments = tmp_path / "segments.jsonl.gz"
    with gzip.open(segments, "wt") as handle:
        handle.write(json.dumps({"docid": "msmarco_v2.1_doc_13#0_1", "url": "u", "title": "T", "headings": "",
                                 "segment": "A segment.", "start_char": 0, "end_char": 10}) + "\n")
        handle.write(json.dumps({"docid": "msmarco_v2.1_doc_13#1_2", "title": "T", "segment": "Another."}) + "\n")
    assert read_passages(segments) == {"msmarco_v2.1_doc_13#0_1": Passage("A segment.", "T"),
                                       "msmarco_v2.1_doc_13#1_2": Passage("Another.", "T")}
    assert read_passages(segments, {"msmarco_v2.1_doc_13#1_2"}) == {"msmarco_v2.1_doc_13#1_2": Passage("Another.", "T")}
    ikat = tmp_path / "ikat.jsonl"
    ikat.write_text('{"id": "clueweb22-en0000-00-00000:0", "contents": "Egypt visas."}\n\n'
                    '{"id": "clue\\"weird", "contents": "An escaped id."}\n')
    assert read_passages(ikat, {'clue"weird'}) == {'clue"weird': Passage("An escaped id.")}
    tsv = tmp_path / "collection.tsv"
    tsv.write_text("7\tSeven is a number.\n8\tEight\twith a tab.\r\n")
    assert read_passages(tsv) == {"7": Passage("Seven is a number."), "8": Passage("Eight\twith a tab.")}
    assert read_passages(tsv, {"8"}) == {"8": Passage("Eight\twith a tab.")}
    assert Passage("text", "Title").with_title == "Title: text" and Passage("text").with_title == "text"


@pytest.mark.parametrize(("text", "message"), [
    ('{"docid": "a", "text": "x"}\n{"docid": "a", "text": "y"}\n', ":2: passage 'a' is given on line 1 already"),
    ('{"docid": "a"}\n', ":1: missing the passage text (one of the keys 'text', 'segment', 'contents')"),
    ('{"text": "x"}\n', ":1: missing the passage id (one of the keys 'docid', 'id')"),
    ('{"docid": "a b", "text": "x"}\n', ":1: docid: expected a passage id without spaces"),
    ("no tab here\n", ':1: expected a JSON object ({"docid", "text"}) or "id<TAB>text"'),
    ('{"docid": "a", "text": "x"\n', ":1: "),
    (b"\xff\xfe\n", ":1: "),
])
def test_a_bad_passage_line_is_one_error(tmp_path, text, message):
    path = tmp_path / "p.jsonl"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(InputError) as info:
        read_passages(path)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_queries_in_every_shape():
    assert parse_queries(b"2024-105741\tis it dangerous to have wbc over 15,000?\n", "topics.txt") == {
        "2024-105741": "is it dangerous to have wbc over 15,000?"}
    assert parse_queries(b'{"id": "1", "title": "I am trying to understand..."}\n{"qid": 2, "query": "q"}\n',
                         "q.jsonl") == {"1": "I am trying to understand...", "2": "q"}
    with pytest.raises(InputError, match=":2: query '1' is given on line 1 already"):
        parse_queries(b"1\ta\n1\tb\n", "q.tsv")
    with pytest.raises(InputError, match="holds no query"):
        parse_queries(b"\n", "q.tsv")

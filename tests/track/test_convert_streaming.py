"""JSON runs read as streams (`read_submission`): at any buffer size, the same turns, messages and
outputs as reading the whole document; memory that does not grow with the run."""

from __future__ import annotations

import copy
import gzip
import io
import json
import random
import tracemalloc

import pytest
from compressed_files import SUFFIXES, compress, zstd_readable
from json_runs import read_whole

from castregin.errors import InputError
from castregin.formats import schema, submissions
from castregin.formats.submissions import _bank_ok, read_submission
from castregin.track.convert import (
    Bank,
    Warnings,
    iter_passages,
    iter_questions,
    iter_responses,
    write_ranked,
)

#: Buffer sizes (bytes read at a time): values straddle every read at the small ones.
CHUNKS = [1, 2, 3, 7, 64, submissions.CHUNK_SIZE]


def mi_turn(turn_id, *questions):
    return {"turn_id": turn_id, "questions": [{"question": q, "score": s} for q, s in questions]}


def mi_run(n_turns=4, name="r"):
    turns = [mi_turn(f"1_1-{i}", ("Q0001", 1.5), (f"t\u00e9xt \"{i}\"", 2), ("Q0002", -0.25))
             for i in range(n_turns)]
    return {"run_name": name, "turns": turns}


def main_run():
    return {"run_name": "m", "run_type": "automatic", "turns": [
        {"turn_id": "1_1-1", "responses": [{"text": "a", "rank": 2, "provenance": [{"id": "P1", "score": 1}]},
                                           {"text": "b", "rank": 1.0, "provenance": [{"id": "P2"}, {"id": "P1"}]}]},
        {"turn_id": "1_1-2", "responses": []}]}


def outcome(read):
    """What reading gives: the run's name, type, turn ids and items, or the error line."""
    try:
        with read() as run:
            return run.name, run.run_type, run.turns.ids, [run.turns[i] for i in range(len(run.turns))]
    except InputError as err:
        return str(err)


def in_memory(path, kind):
    """The run read whole by json and checked by the schemas alone (the reference, tests/json_runs.py)."""
    return outcome(lambda: read_whole(path, kind))


def streamed(path, kind, chunk, monkeypatch):
    monkeypatch.setattr(submissions, "CHUNK_SIZE", chunk)
    return outcome(lambda: read_submission(path, kind))


def assert_same_at_every_chunk(path, kind, monkeypatch):
    expected = in_memory(path, kind)
    for chunk in CHUNKS:
        assert streamed(path, kind, chunk, monkeypatch) == expected, chunk
    return expected


GOOD = json.dumps(mi_run())


def bad_score(turn, question, value='"x"'):
    """GOOD with one score replaced by ``value`` (JSON text)."""
    data = mi_run()
    data["turns"][turn]["questions"][question]["score"] = "<here>"
    return json.dumps(data).replace('"<here>"', value)


DOCUMENTS = {
    "valid": GOOD,
    "valid, indented": json.dumps(mi_run(), indent=2),
    "valid, with a BOM": "\ufeff" + GOOD,
    "run_name after the turns": json.dumps({"turns": mi_run()["turns"], "run_name": "late"}),
    "no run_name": json.dumps({"turns": mi_run()["turns"]}),
    "no turns": '{"run_name": "r"}',
    "empty object": " {} ",
    "empty turns": '{"turns": [ ], "run_name": "r"}',
    "turns twice, the first bad": json.dumps(mi_run())[:-1] + ', "turns": [' + json.dumps(mi_turn("2_1-1")) + "]}",
    "turns twice, the second bad": GOOD[:-1] + ', "turns": [{"turn_id": 5}]}',
    "turns not an array, then one": '{"turns": {}, "turns": [' + json.dumps(mi_turn("1_1-1", ("Q1", 1))) + "]}",
    "turns an array, then not": '{"turns": [], "turns": "x"}',
    "a key repeated in a turn (the last wins)": '{"turns": [{"turn_id": "a", "turn_id": "b", "questions": []}]}',
    "other members kept apart": '{"run_name": "r", "notes": {"a": [1, 2, {"b": null}]}, "turns": []}',
    "a root array": "[1, 2]",
    "a root string": '"run"',
    "an empty file": "",
    "only whitespace": " \n\t ",
    "two BOMs": "\ufeff\ufeff" + GOOD,
    "a turn that is a number": '{"turns": [123456789012345678901234567890]}',
    "a score that is NaN": bad_score(1, 1, "NaN"),
    "a score that is -Infinity": bad_score(1, 1, "-Infinity"),
    "a score beyond floats": bad_score(1, 1, "1" + "0" * 400),
    "a score of 1e999": bad_score(1, 1, "1e999"),
    "a bad turn in the middle": bad_score(2, 2),
    "two bad turns": bad_score(2, 2)[:-2] + ', {"turn_id": "x y", "questions": []}]}',
    "a bad turn, then a syntax error": bad_score(0, 2)[:-3] + "]}",
    "a bad turn, then a bad run_name": bad_score(0, 1, "null")[:-1] + ', "run_name": 5}',
    "a trailing comma in turns": GOOD[:-2] + ",]}",
    "a trailing comma in the object": GOOD[:-1] + ",}",
    "no comma between turns": GOOD.replace("]}, {", "]} {", 1),
    "no colon": GOOD.replace('"turns":', '"turns"', 1),
    "a key that is not a string": GOOD.replace('"run_name"', "run_name", 1),
    "extra data": GOOD + " {}",
    "a truncated document": GOOD[:-40],
    "an unterminated string": GOOD[: GOOD.index("Q0002") + 3],
    "a bad escape": GOOD.replace("t\\u00e9xt", "t\\u00zext", 1),
    "a control character in a string": GOOD.replace("Q0001", "Q00\x0101", 2),
    "a number cut short": GOOD.replace("1.5", "1.", 1),
    "nested too deeply": '{"turns": [' + "[" * 20_000 + "]" * 20_000 + "]}",
    "nested too deeply elsewhere": '{"run_name": ' + "[" * 20_000 + "]" * 20_000 + ', "turns": []}',
    # A lone surrogate (an escape of half a UTF-16 pair) is no text: convert questions wrote it into the bank,
    # a UnicodeEncodeError traceback. Refused, before the schema's problems, at the first in the document.
    "a lone surrogate in a question": GOOD.replace("Q0002", "\\ud800", 3),
    "a lone low surrogate in a question": GOOD.replace("Q0002", "x\\udc00", 1),
    "a lone surrogate in a key of a turn": GOOD.replace('"score"', '"\\ud800"', 1),
    "a lone surrogate in run_name, a bad turn": bad_score(1, 1).replace('"r"', '"\\udbff"', 1),
    "a bad turn, then a lone surrogate": bad_score(0, 1)[:-2] + ', {"turn_id": "x", "q": "\\ud800"}]}',
    "a lone surrogate after the turns": GOOD[:-1] + ', "notes": ["\\ud800"]}',
    "a lone surrogate in a root key": '{"\\ud800": 1, ' + GOOD[1:],
    "a lone surrogate in turns given twice, the first": GOOD.replace("Q0002", "\\ud800", 1)[:-1]
    + ', "turns": []}',
    "a surrogate pair": GOOD.replace("Q0002", "\\ud83d\\ude00"),
    "an escaped backslash before ud800": GOOD.replace("Q0002", "\\\\ud800"),
    "a high surrogate then another": GOOD.replace("Q0002", "\\ud800\\ud83d\\ude00", 1),
}


@pytest.mark.parametrize("name", list(DOCUMENTS))
def test_same_as_the_whole_document(name, tmp_path, monkeypatch):
    path = tmp_path / "run.json"
    path.write_text(DOCUMENTS[name], encoding="utf-8")
    assert_same_at_every_chunk(path, "mi", monkeypatch)


@pytest.mark.parametrize("indent", [None, 1])
def test_random_damage_same_as_the_whole_document(indent, tmp_path, monkeypatch):
    # Characters deleted, inserted or cut out at random (and now and then a byte that is not UTF-8):
    # whatever the damage, the same message (or the same turns) at every buffer size.
    rng = random.Random(20221110)
    base = json.dumps(mi_run(), indent=indent)
    alphabet = [*list('{}[],:" \n\t0123456789.-eEtrufalsnNIy\\'), "é", "\ufeff"]
    path = tmp_path / "run.json"
    for _ in range(150):
        text = base
        for _ in range(rng.randint(1, 3)):
            i, j = sorted((rng.randrange(len(text) + 1), rng.randrange(len(text) + 1)))
            text = rng.choice([text[:i] + text[i + 1:], text[:i] + rng.choice(alphabet) + text[i:],
                               text[:i] + text[j:]])
        data = text.encode()
        if rng.random() < 0.1:
            cut = rng.randrange(len(data) + 1)
            data = data[:cut] + b"\xff" + data[cut:]
        path.write_bytes(data)
        expected = in_memory(path, "mi")
        for chunk in (1, 3, 64):
            assert streamed(path, "mi", chunk, monkeypatch) == expected, (text, chunk)


def test_the_documents_cover_what_they_say(tmp_path, monkeypatch):
    # A few of the reference outcomes spelled out, so that the parity above is not parity of nonsense.
    def got(name):
        path = tmp_path / "run.json"
        path.write_text(DOCUMENTS[name], encoding="utf-8")
        return streamed(path, "mi", 3, monkeypatch)

    path = str(tmp_path / "run.json")
    assert got("run_name after the turns")[0] == "late"
    assert got("turns twice, the first bad")[2] == ["2_1-1"]
    assert got("a bad turn in the middle") == f'{path}: turns[2].questions[2].score: expected a number, got "x"'
    assert got("a bad turn, then a syntax error").startswith(f"{path}:1: invalid JSON at column ")
    assert got("a bad turn, then a bad run_name") == f"{path}: run_name: expected a string, got 5"
    assert got("a score beyond floats").endswith("got an integer of 401 digits, too large for a number "
                                                 "(at most about 1.8e308)")
    assert got("a root array") == (f'{path}: expected a mixed-initiative run (a JSON object with "turns"), '
                                   "got an array")
    assert got("nested too deeply").startswith(f"{path}: JSON nested too deeply")
    assert got("a key repeated in a turn (the last wins)")[2] == ["b"]
    lone = "is a lone surrogate (\\ud800, half of a UTF-16 pair), which is no Unicode text; fix the escape"
    assert got("a lone surrogate in a question") == f"{path}: turns[0].questions[2].question: character 1 {lone}"
    assert got("a lone surrogate in a key of a turn") == f"{path}: turns[0].questions[0]: a key: character 1 {lone}"
    assert got("a bad turn, then a lone surrogate") == f"{path}: turns[4].q: character 1 {lone}"
    assert got("a lone surrogate in run_name, a bad turn").startswith(f"{path}: run_name: character 1 is a lone")
    assert got("a lone surrogate after the turns") == f"{path}: notes[0]: character 1 {lone}"
    assert got("a lone surrogate in turns given twice, the first")[2] == []
    assert got("a surrogate pair")[3][0][0][2] == "\U0001f600"
    assert got("an escaped backslash before ud800")[3][0][0][2] == "\\ud800"


@pytest.mark.parametrize("edit", [
    lambda d: d,
    lambda d: d["turns"][0]["responses"][1].update(rank="2"),
    lambda d: d["turns"][0]["responses"][0]["provenance"][0].update(id="a b"),
    lambda d: d.update(run_type=3),
    lambda d: d["turns"].append(d["turns"][0]),
    lambda d: d["turns"][0]["responses"][1].update(text="b \ud800"),
    lambda d: d["turns"][1].update(note="\udfff"),
], ids=["valid", "rank", "passage id", "run_type", "duplicate turn", "lone surrogate", "lone surrogate elsewhere"])
def test_main_task_runs_the_same(edit, tmp_path, monkeypatch):
    data = main_run()
    edit(data)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert_same_at_every_chunk(path, "main", monkeypatch)


def test_bytes_that_are_not_utf8(tmp_path, monkeypatch):
    # Reading whole decodes first: a bad byte anywhere beats a syntax error before it; the line is right.
    text = json.dumps(mi_run(30), indent=1)
    middle = text.index('"1_1-17"')
    data = text[:100].replace(":", "", 1).encode() + text[100:middle].encode() + b"\xff" + text[middle:].encode()
    path = tmp_path / "run.json"
    path.write_bytes(data)
    expected = assert_same_at_every_chunk(path, "mi", monkeypatch)
    line = text[:middle].count("\n") + 1
    assert expected == f"{path}:{line}: byte 0xff is not valid UTF-8; save the file as UTF-8"
    path.write_bytes(b"\xef\xbb\xbf" + data)  # after a BOM too (the whole-file reader miscounted there)
    assert streamed(path, "mi", 5, monkeypatch) == expected


# ------------------------------------------------------------------------------------- large runs

def large_run(n_turns=400, per_turn=12):
    """A multi-line run of a few hundred turns (``json.dumps(indent=1)``)."""
    turns = [mi_turn(f"{100 + t // 10}_1-{t % 10}", *((f"Q{(t * 7 + q) % 50:04d}", (t * q) % 97 / 7)
                                                       for q in range(per_turn))) for t in range(n_turns)]
    return {"run_name": "large run", "turns": turns}


#: A bank holding every id of large_run.
LARGE_BANK = {f"Q{i:04d}": f"question {i}" for i in range(50)}


def test_errors_in_the_middle_of_a_large_run(tmp_path, monkeypatch):
    monkeypatch.setattr(submissions, "CHUNK_SIZE", 4096)
    path = tmp_path / "run.json"
    data = large_run()
    data["turns"][317]["questions"][5]["score"] = "x"
    path.write_text(json.dumps(data, indent=1))
    with pytest.raises(InputError) as caught:
        read_submission(path, "mi")
    assert str(caught.value) == f'{path}: turns[317].questions[5].score: expected a number, got "x"'

    text = json.dumps(large_run(), indent=1)
    cut = text.index('"turn_id": "131_1-3"')
    text = text[:cut] + text[cut:].replace('"score": ', '"score" ', 1)  # a colon missing in turn 313
    path.write_text(text)
    with pytest.raises(json.JSONDecodeError) as reference:
        json.loads(text)
    with pytest.raises(InputError) as caught:
        read_submission(path, "mi")
    assert reference.value.lineno > 10_000
    assert caught.value.line == reference.value.lineno
    assert str(caught.value) == (f"{path}:{reference.value.lineno}: invalid JSON at column {reference.value.colno}: "
                                 "Expecting ':' delimiter")


def converted(run, kind, banks):
    """(output lines, warnings, new bank ids) of converting ``run`` with fresh banks."""
    out, warnings = io.StringIO(), Warnings()
    bank = Bank.merge(banks, "Q" if kind == "mi" else "R")
    if kind == "mi":
        ranked = iter_questions(run, bank, warnings=warnings)
    elif kind == "responses":
        ranked = iter_responses(run, bank, warnings=warnings, depth=5)
    else:
        ranked = iter_passages(run, warnings=warnings)
    write_ranked(out, ranked, run.tag)
    return out.getvalue(), warnings.events(), bank.new_ids


def assert_outputs_the_same(path, kinds, banks, monkeypatch, chunks=(997, submissions.CHUNK_SIZE)):
    reference = read_whole(path, "mi" if kinds == ["mi"] else "main")
    for kind in kinds:
        expected = converted(reference, kind, banks)
        assert expected[0]
        for chunk in chunks:
            monkeypatch.setattr(submissions, "CHUNK_SIZE", chunk)
            with read_submission(path, "mi" if kind == "mi" else "main") as run:
                assert converted(run, kind, banks) == expected, (kind, chunk)


def test_duplicate_turns_and_new_texts_as_before(tmp_path, monkeypatch):
    # New ids follow the turns as grouped (a turn listed twice is one turn): streaming cannot convert
    # a turn before the whole run is read, and does not.
    data = {"run_name": "d", "turns": [mi_turn("1_1-1", ("new a", 1), ("Q0001", 2)), mi_turn("1_1-2", ("new b", 1)),
                                       mi_turn("1_1-1", ("new c", 3), ("new a", 0.5), ("Q0009", 1))]}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data))
    assert_outputs_the_same(path, ["mi"], [{"Q0001": "one"}], monkeypatch, chunks=CHUNKS)
    monkeypatch.setattr(submissions, "CHUNK_SIZE", 5)
    lines, events, new_ids = converted(read_submission(path, "mi"), "mi", [{"Q0001": "one"}])
    assert new_ids == ["Q0002", "Q0003", "Q0004"] and lines.splitlines()[0] == "1_1-1\tQ0\tQ0003\t1\t3.0\td"
    assert [kind for _, kind in events] == ["duplicate turn", "duplicate question", "unknown id"]


@pytest.mark.parametrize("name", ["bm25_baseline_mi_run", "miniLM_bert_sample_mi_run", "T5_raw_run",
                                  "T5_rewrite_run"])
def test_cast_mi_runs_byte_identical(name, cast2022, monkeypatch):
    banks = [json.loads((cast2022 / "regin/question_bank.json").read_text())]
    assert_outputs_the_same(cast2022 / f"runs/mi/{name}.json", ["mi"], banks, monkeypatch)
    assert_outputs_the_same(cast2022 / f"runs/mi/{name}.json", ["mi"], [{"Q0001": "x"}], monkeypatch)  # new ids


def test_cast_main_run_byte_identical(cast2022, monkeypatch):
    banks = [json.loads((cast2022 / "regin/response_bank.json").read_text())]
    assert_outputs_the_same(cast2022 / "runs/main/sample_run.json", ["responses", "passages"], banks, monkeypatch)


def test_run_name_after_the_turns_names_the_lines(tmp_path, cli):
    turns = large_run(30)["turns"]
    (tmp_path / "run.json").write_text(json.dumps({"turns": turns, "run_name": "named  late"}))
    (tmp_path / "bank.json").write_text(json.dumps(LARGE_BANK))
    result = cli("convert", "questions", tmp_path / "run.json", "--bank", tmp_path / "bank.json", "-o", "-")
    assert result.exit_code == 0
    assert {line.split("\t")[5] for line in result.stdout.splitlines()} == {"named_late"}


# ------------------------------------------------------------------------------- inputs and memory

@pytest.mark.parametrize("suffix", SUFFIXES)
def test_compressed_runs(suffix, tmp_path, cli, monkeypatch):
    if suffix == "zst" and not zstd_readable():
        pytest.skip("no zstd reader here")
    monkeypatch.setattr(submissions, "CHUNK_SIZE", 1000)
    text = json.dumps(large_run(50), indent=1)
    (tmp_path / "bank.json").write_text(json.dumps(LARGE_BANK))
    (tmp_path / "run.json").write_text(text)
    (tmp_path / f"run.json.{suffix}").write_bytes(compress(text.encode(), suffix))
    plain = cli("convert", "questions", tmp_path / "run.json", "--bank", tmp_path / "bank.json", "-o", "-")
    packed = cli("convert", "questions", tmp_path / f"run.json.{suffix}", "--bank", tmp_path / "bank.json",
                 "-o", "-")
    assert packed.exit_code == 0 and packed.stdout == plain.stdout and plain.stdout.count("\n") > 300
    piped = cli("convert", "questions", "-", "--bank", tmp_path / "bank.json", "-o", "-",
                input=compress(text.encode(), suffix))
    assert piped.stdout == plain.stdout


def test_a_damaged_stream_is_reported_before_the_json(tmp_path, monkeypatch):
    # Reading whole, the damaged gzip stream came first; streamed, it still does, though the
    # truncated text breaks off in the middle of a turn first.
    monkeypatch.setattr(submissions, "CHUNK_SIZE", 100)
    data = gzip.compress(json.dumps(large_run(50)).encode(), mtime=0)
    path = tmp_path / "run.json.gz"
    path.write_bytes(data[: len(data) // 2])
    expected = in_memory(path, "mi")
    assert expected.startswith(f"{path}: not a valid gzip stream")
    assert streamed(path, "mi", 100, monkeypatch) == expected


def test_memory_does_not_grow_with_the_run(tmp_path, monkeypatch):
    # About 8 MB of JSON: parsed whole it takes about 55 MB; streamed, a buffer, a turn and the turn ids.
    path = tmp_path / "run.json"
    path.write_text(json.dumps(large_run(2000, 80)))
    assert path.stat().st_size > 7_000_000
    monkeypatch.setattr(submissions, "CHUNK_SIZE", 1 << 16)
    monkeypatch.setattr(submissions, "_SPOOL_IN_MEMORY", 1 << 16)
    (tmp_path / "small.json").write_text(json.dumps(large_run(2, 2)))
    read_submission(tmp_path / "small.json", "mi").close()  # jsonschema and the schemas loaded before counting
    tracemalloc.start()
    try:
        with read_submission(path, "mi") as run:
            _, peak = tracemalloc.get_traced_memory()
            questions, scores = run.turns[1999]
            assert len(run.turns) == 2000 and (questions[-1], scores[-1]) == ("Q0022", 79 * 1999 % 97 / 7)
    finally:
        tracemalloc.stop()
    assert peak < 1_500_000


# ------------------------------------------------------------------------------- fast paths

def test_a_question_resolved_before_follows_the_bank(tmp_path):
    # Ids found are remembered per text; a text added to the bank later under its own id is not stale.
    bank = Bank({"Q0001": "x  y"})
    (tmp_path / "run.json").write_text(json.dumps({"turns": [mi_turn("1_1-1", ("x y", 1.0))]}))
    with read_submission(tmp_path / "run.json", "mi") as run:
        assert list(iter_questions(run, bank)) == [("1_1-1", [("Q0001", 1.0)])]
        assert bank.add("x y") == "Q0002"
        assert list(iter_questions(run, bank)) == [("1_1-1", [("Q0002", 1.0)])]


def test_bank_fast_check_is_never_laxer_than_the_schema():
    validator = schema.validator("bank")
    values = [None, True, 0, 1.5, "", "a b", "x", "x\n", [], {}, [1], {"id": "P"}]
    banks = [{"Q1": "a", "Q2": "b"}, [{"question_id": "Q1", "question": "a"}], [], {}]
    for bank in banks:
        for key in ([*bank, "Q 3", "", "Q3\n"] if isinstance(bank, dict) else range(len(bank) + 1)):
            for value in values:
                edited = copy.deepcopy(bank)
                if isinstance(edited, dict) or key < len(edited):
                    edited[key] = value
                else:
                    edited.append(value)
                assert _bank_ok(edited) == validator.is_valid(edited), (edited,)
    for value in values:
        assert _bank_ok(value) == validator.is_valid(value), value

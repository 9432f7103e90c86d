"""Mixed-initiative turns read by msgspec a batch at a time (``submissions._MIBatches``) give what Python's
json gives on the whole document: the same turns, values and error messages, whatever the numbers
(NaN, integers beyond 64 bits or beyond a float, -0), the strings (lone surrogates, ``"turn_id"`` inside a
question), the members' order, repeated keys and the places where batches and reads are cut.

The oracle is ``json.loads`` of the whole document and the schemas (``read_whole`` of tests/json_runs.py), as in
tests/track/test_convert_streaming.py.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from json_runs import read_whole

from castregin.errors import InputError
from castregin.formats import submissions
from castregin.formats.submissions import read_submission

#: Question texts as JSON text: ids, the separating key inside a text, escapes, a lone surrogate.
QUESTIONS = ['"Q0001"', '"Q0002"', '"turn_id"', '"a \\"turn_id\\": 1"', '", {\\"turn_id\\": \\"x\\""', '"\\ud800"',
             '"caf\\u00e9"', '"caf\u00e9"', '""', '"\\ud83d\\ude00"']
#: Scores as JSON text: what json and msgspec might read differently.
SCORES = ["1", "1.5", "-0", "-0.0", "0.1", "1e-7", "1E400", "-1e400", "NaN", "-Infinity", "Infinity",
          "123456789012345678901234567890", "18446744073709551616", "-9223372036854775809", "1" + "0" * 308,
          str(2**1023), str(2**1023 - 1), "-" + str(2**1023), "1e308", "8.98846567431158e307",
          "1.7976931348623157e308", "5e-324", "true", '"1"', "null", "19.988618508798684",
          # msgspec before 0.19 read integers from 2**64 + 10**18 to 20 digits wrong (its issue #701).
          "19933688932870350000", "19999999999999999999", "-19999999999999999999"]
TURN_IDS = ['"1_1-1"', '"1_1-2"', '"1_1-3"', '"a b"', "5", '"1_1-1"']
SPACES = ["", " ", "\n    "]


@st.composite
def questions(draw):
    members = [f'"question": {draw(st.sampled_from(QUESTIONS))}', f'"score": {draw(st.sampled_from(SCORES))}']
    if draw(st.booleans()):
        members.append(draw(st.sampled_from(['"x": [1, {"y": NaN}]', '"x": 1e999', '"score": 2.5',
                                             '"question": "Q0002"', '"x": "\\ud800"', '"x": [[[[]]]]'])))
    members = draw(st.permutations(members))
    space = draw(st.sampled_from(SPACES))
    return "{" + space + ("," + space).join(members) + space + "}"


@st.composite
def turns(draw):
    members = [f'"turn_id": {draw(st.sampled_from(TURN_IDS))}',
               '"questions": [' + ", ".join(draw(st.lists(questions(), max_size=4))) + "]"]
    if draw(st.integers(0, 5)) == 0:
        members.append(draw(st.sampled_from(['"turn_id": "1_1-9"', '"note": {"a": [1, 2]}', '"questions": 5'])))
    if draw(st.booleans()):
        members.reverse()
    space = draw(st.sampled_from(SPACES))
    return "{" + space + ("," + space).join(members) + space + "}"


@st.composite
def documents(draw):
    """Mostly valid turns of one shape (so that msgspec reads batches), with odd values here and there."""
    plain = '{"turn_id": "%s", "questions": [{"question": "Q0001", "score": 1.25}, {"question": "x", "score": 2}]}'
    parts = [plain % f"1_2-{i}" for i in range(draw(st.integers(1, 6)))]
    for _ in range(draw(st.integers(0, 3))):
        parts.insert(draw(st.integers(0, len(parts))), draw(turns()))
    space = draw(st.sampled_from(SPACES))
    # Now and then a fault of the array itself (an empty element, a comma too many), which json refuses.
    joiner = draw(st.sampled_from(["," + space] * 6 + [", ,", ",\n,", ",,"]))
    text = space + joiner.join(parts)
    if draw(st.integers(0, 9)) == 0:
        text = draw(st.sampled_from([", " + text, text + ",", text + ", "]))
    return '{"run_name": "r", "turns": [' + text + "]}"


def outcome(read):
    """What reading gives: the run's name, turn ids and items (scores as repr, so that -0.0 is not 0.0), or
    the error line."""
    try:
        with read() as run:
            items = [(run.turns[i][0], [repr(score) for score in run.turns[i][1]]) for i in range(len(run.turns))]
            return run.name, run.turns.ids, items
    except InputError as err:
        return str(err)


def in_memory(path):
    return outcome(lambda: read_whole(path, "mi"))


def streamed(path, chunk, batch):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(submissions, "CHUNK_SIZE", chunk)
        patch.setattr(submissions, "BATCH_CHARS", batch)
        return outcome(lambda: read_submission(path, "mi"))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=documents(), chunk=st.sampled_from([5, 64, 1 << 22]), batch=st.sampled_from([1, 150, 1 << 20]))
@example(document='{"turns": [{"turn_id": "1_1-1", "questions": []}, {"turn_id": "1_1-2", "questions": '
                  '[{"question": "Q1", "score": ' + "1" + "0" * 308 + '}]}, {"turn_id": "1_1-3", "questions": []}]}',
         chunk=1 << 22, batch=1 << 20)
@example(document='{"turns": [{"turn_id": "1_1-1", "questions": []}, ,{"turn_id": "1_1-2", "questions": []}]}',
         chunk=1 << 22, batch=1 << 20)  # an empty element after a turn json read: json's error, not a run
def test_batches_read_what_json_reads(tmp_path_factory, document, chunk, batch):
    path = tmp_path_factory.mktemp("run") / "run.json"
    path.write_text(document, encoding="utf-8")
    assert streamed(path, chunk, batch) == in_memory(path)


def spooled_by_msgspec(path, monkeypatch) -> int:
    """How many turns of ``path`` msgspec read (the rest json did), the run valid or not."""
    counted = []
    original = submissions._TurnReader.turns
    monkeypatch.setattr(submissions._TurnReader, "turns", lambda self, turns: (counted.append(len(turns)),
                                                                               original(self, turns)))
    try:
        with read_submission(path, "mi"):
            pass
    except InputError:
        pass
    return sum(counted)


def test_msgspec_reads_the_turns_between_the_first_and_the_last(tmp_path, monkeypatch):
    data = {"run_name": "r", "turns": [{"turn_id": f"1_1-{i}", "questions": [{"question": "Q1", "score": i / 7}]}
                                       for i in range(50)]}
    path = tmp_path / "run.json"
    for indent in (None, 4):
        path.write_text(json.dumps(data, indent=indent), encoding="utf-8")
        assert spooled_by_msgspec(path, monkeypatch) == 48  # the first (its key tells turns apart) and the last
        with read_submission(path, "mi") as run:
            assert run.turns[3] == (["Q1"], [3 / 7])


@pytest.mark.parametrize(("score", "message"), [
    ("1" + "0" * 308, "an integer of 309 digits, too large for a number"),
    (str(2**1023), "an integer of 308 digits, too large for a number"),
    ("NaN", "expected a finite number, got NaN"),
    ("1e400", "expected a finite number"),
])
def test_a_score_json_refuses_is_refused_inside_a_batch(score, message, tmp_path, monkeypatch):
    turns = [f'{{"turn_id": "1_1-{i}", "questions": [{{"question": "Q1", "score": {score if i == 5 else 1}}}]}}'
             for i in range(10)]
    path = tmp_path / "run.json"
    path.write_text('{"turns": [' + ", ".join(turns) + "]}", encoding="utf-8")
    expected = in_memory(path)
    assert isinstance(expected, str) and "turns[5].questions[0].score" in expected and message in expected
    for batch in (1, 150, 1 << 20):
        assert streamed(path, 1 << 22, batch) == expected
    # Batches of about two turns: msgspec reads those before and after the bad one's, json that one.
    monkeypatch.setattr(submissions, "BATCH_CHARS", 150)
    assert 4 <= spooled_by_msgspec(path, monkeypatch) <= 7


def test_integers_beyond_64_bits_are_the_floats_json_gives(tmp_path):
    big = [str(2**64), str(-(2**63) - 1), "9" * 300, str(2**1023 - 2**970), "123456789012345678901234567890",
           "19933688932870350000", "19999999999999999999"]  # msgspec < 0.19 read these two wrong
    turns = [f'{{"turn_id": "1_1-{i}", "questions": [{{"question": "Q1", "score": {text}}}]}}'
             for i, text in enumerate(["1", *big, "1"])]
    path = tmp_path / "run.json"
    path.write_text('{"turns": [' + ", ".join(turns) + "]}", encoding="utf-8")
    with read_submission(path, "mi") as run:
        scores = [run.turns[i][1][0] for i in range(1, len(big) + 1)]
    assert scores == [float(int(text)) for text in big]
    assert all(math.isfinite(score) for score in scores)


def scanned_for_separators(path, monkeypatch) -> int:
    """How many characters the search for separators of turns went through while ``path`` was read."""
    counted = []
    original = submissions._turn_separator

    def counting(text, key, start, stop, *, last):
        found = original(text, key, start, stop, last=last)
        counted.append(max(stop - start, 0) if found < 0 else stop - found if last else found - start)
        return found

    monkeypatch.setattr(submissions, "_turn_separator", counting)
    with read_submission(path, "mi"):
        pass
    return sum(counted)


def _turn(turn_id: str, first: str, score: float) -> str:
    members = {"turn_id": f'"turn_id": "{turn_id}"',
               "questions": f'"questions": [{{"question": "Q1", "score": {score}}}]'}
    return "{" + ", ".join([members[first], *(text for name, text in members.items() if name != first)]) + "}"


@pytest.mark.parametrize(("chunk", "batch"), [(1 << 22, 1 << 20), (512, 150)])
def test_turns_shaped_unlike_the_first_are_read_without_scanning_again(chunk, batch, tmp_path, monkeypatch):
    # The first turn {"turn_id", "questions"}, the others {"questions", "turn_id"}: the separator learned
    # from the first is in none of them (it was searched to the end once a turn: quadratic time).
    turns = [_turn(f"1_1-{i}", "turn_id" if i == 0 else "questions", i / 7) for i in range(400)]
    text = '{"run_name": "r", "turns": [' + ", ".join(turns) + "]}"
    path = tmp_path / "run.json"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(submissions, "CHUNK_SIZE", chunk)
    monkeypatch.setattr(submissions, "BATCH_CHARS", batch)
    assert streamed(path, chunk, batch) == in_memory(path)
    assert scanned_for_separators(path, monkeypatch) <= 3 * len(text)
    assert spooled_by_msgspec(path, monkeypatch) >= 390  # the key follows the turns' shape


def test_turns_of_ever_new_first_members_are_read_without_scanning_again(tmp_path, monkeypatch):
    # No two turns begin with the same member: no separator is ever found, and none is searched twice.
    turns = [f'{{"n{i}": 0, "turn_id": "1_1-{i}", "questions": []}}' for i in range(400)]
    text = '{"turns": [' + ", ".join(turns) + "]}"
    path = tmp_path / "run.json"
    path.write_text(text, encoding="utf-8")
    assert streamed(path, 1 << 22, 1 << 20) == in_memory(path)
    assert scanned_for_separators(path, monkeypatch) <= 3 * len(text)



def without_batches(path):
    """What reading gives with json reading every turn (no batch for msgspec)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(submissions._MIBatches, "read", lambda self, stream, reader: False)
        return outcome(lambda: read_submission(path, "mi"))


def json_depth_limit() -> int:
    """The deepest array json reads from this test's stack (found by bisection: Python's recursion limit)."""
    low, high = 1, 1 << 16
    while low < high:
        middle = (low + high + 1) // 2
        try:
            json.loads("[" * middle + "]" * middle)
            low = middle
        except RecursionError:
            high = middle - 1
    return low


@pytest.mark.parametrize("where", ["turn", "question"])
def test_a_member_nested_too_deeply_for_json_is_too_deep_inside_a_batch(where, tmp_path):
    # Python's recursion limit bounds both, but msgspec reads a few levels more than json: an unknown
    # member (which msgspec skipped) nested just too deeply for json, in a middle turn, was read in a batch.
    plain = '{"question": "Q1", "score": 1}'
    outcomes = set()
    limit = json_depth_limit()  # about 990 on CPython 3.11 here; it varies with the version and the stack
    for depth in range(limit - 80, limit + 20):
        deep = '"x": ' + "[" * depth + "]" * depth
        question = f'{{"question": "Q1", {deep}, "score": 1}}' if where == "question" else plain
        turns = [f'{{"turn_id": "1_1-{i}", "questions": [{question if i == 5 else plain}]'
                 f'{", " + deep if i == 5 and where == "turn" else ""}}}' for i in range(10)]
        path = tmp_path / "run.json"
        path.write_text('{"turns": [' + ", ".join(turns) + "]}", encoding="utf-8")
        expected = without_batches(path)
        outcomes.add("nested too deeply" in expected if isinstance(expected, str) else expected[1][5])
        assert streamed(path, 1 << 22, 1 << 20) == expected, depth
    assert outcomes == {True, "1_1-5"}  # depths json reads and depths it refuses
